// The parts of autocannon's API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  namespace autocannon {
    interface Client {
      setBody(body: string): void;
    }
    interface RequestParams {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      /** Requests a second across all connections. */
      overallRate?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      setupClient?: (client: Client) => void;
      requests?: Array<{ setupRequest?: (req: RequestParams) => RequestParams }>;
    }
    interface Histogram {
      average: number;
      p50: number;
      p99: number;
    }
    interface Result {
      /** `total`: every request answered during the run. */
      requests: Histogram & { total: number };
      latency: Histogram;
      non2xx: number;
      errors: number;
    }
  }
  function autocannon(opts: autocannon.Options, cb: (err: Error | null, result: autocannon.Result) => void): unknown;
  export default autocannon;
}
