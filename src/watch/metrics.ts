import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The Prometheus metrics of one `htorder watch` process, in its own Registry (never the
 * global one, so a library user's registry is left alone and tests can run several).
 */
export class WatchMetrics {
  readonly registry = new Registry();

  readonly files = new Counter({
    name: 'htorder_watch_files_total',
    help:
      'Inputs handled, by outcome: done, failed, retry (API or store unavailable; left to retry later), ' +
      'lost (taken over by another instance) or requeued (changed while processed; taken again once complete)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly jobs = new Counter({
    name: 'htorder_watch_jobs_total',
    help: 'Jobs of processed inputs, by report status (submitted, already-submitted, invalid, failed, ...)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly fileDuration = new Histogram({
    name: 'htorder_watch_file_duration_seconds',
    help: 'From claiming an input to its reports being in place',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });

  readonly pickupDelay = new Histogram({
    name: 'htorder_watch_pickup_delay_seconds',
    help: 'From an input being seen complete (stable, or marked) to it being claimed',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });

  readonly inFlight = new Gauge({
    name: 'htorder_watch_files_in_flight',
    help: 'Inputs being processed now',
    registers: [this.registry],
  });

  readonly waiting = new Gauge({
    name: 'htorder_watch_files_waiting_retry',
    help: 'Claimed inputs waiting to be retried because the API or store was unavailable',
    registers: [this.registry],
  });

  readonly scans = new Counter({
    name: 'htorder_watch_scans_total',
    help: 'Scans of the drop location, by result',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly lastScan = new Gauge({
    name: 'htorder_watch_last_scan_timestamp_seconds',
    help: 'Unix time of the last successful scan',
    registers: [this.registry],
  });

  readonly apiRequests = new Counter({
    name: 'htorder_api_requests_total',
    help: 'HTTP requests to the ordering API and its token endpoint, by method and status code',
    labelNames: ['method', 'status'] as const,
    registers: [this.registry],
  });

  readonly apiErrors = new Counter({
    name: 'htorder_api_errors_total',
    help: 'API requests that got no response (connect error, reset, timeout) or a 5xx/429',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly apiDuration = new Histogram({
    name: 'htorder_api_request_duration_seconds',
    help: 'From sending an API request to its response headers',
    labelNames: ['method'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  constructor(opts: { processMetrics?: boolean } = {}) {
    if (opts.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'htorder_' });
  }
}
