/**
 * The outcome of matching a human value against an account's lookup list: the entry it
 * names, or nothing (with the closest entry's spelling to suggest, when one is close).
 */
export type Match<T> = { found: T } | { found?: undefined; suggestion?: string };
