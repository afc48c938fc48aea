/** What a route handler answers; the server turns it into an HTTP response. */
export interface Reply {
  status: number;
  /** JSON-serialised unless `raw` is set; omitted for 204. */
  body?: unknown;
  /** Sent verbatim (e.g. the status HTML page). */
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export const json = (body: unknown, status = 200): Reply => ({ status, body });
export const noContent = (): Reply => ({ status: 204 });
