/** The password-file reader of node-postgres's authors (libpq's ~/.pgpass format), which ships no types. */
declare module 'pgpass' {
  function pgpass(
    info: { host: string; port: number; user: string; database: string },
    found: (password: string | undefined) => void,
  ): void;
  export default pgpass;
}
