// What the live number-lookup connectors (TWILIO_LOOKUP, INFOBIP_LOOKUP) share: they carry no messages, only answer
// the number-status port; their settings (baseUrl, timeoutMs, offlineFallback); and how a provider that fails is
// answered — an error the customer can read, or the number plan's answer flagged offline when the operator allows it.
import { fail } from '../core/errors.ts';
import type { NumberLookup } from '../core/lookup/enrich.ts';
import { type LiveStatus, LookupUnavailableError, numberPlanStatus } from '../core/lookup/number-status.ts';
import type { Connector, ConnectorContext, OutboundMessage, SubmitResult } from '../core/ports.ts';
import { wholeNumber } from './kind.ts';

export interface LookupSettings {
  baseUrl: string;
  timeoutMs: number;
  /** When the provider cannot answer, answer from the number plan (flagged `offline`) instead of an error. */
  offlineFallback: boolean;
}

const invalid: (field: string, reason: string) => never = (field, reason) => fail('INVALID_REQUEST', reason, field);

/** Checks the settings every lookup connector has, and refuses any other (`own` names the kind's extra settings). */
export function lookupSettings(kind: string, settings: Record<string, unknown>, defaultBaseUrl: string | null): LookupSettings {
  for (const field of Object.keys(settings)) {
    if (!['baseUrl', 'timeoutMs', 'offlineFallback'].includes(field))
      invalid(field, `is not a setting of a ${kind} connector (baseUrl, timeoutMs, offlineFallback)`);
  }
  const raw = settings.baseUrl ?? defaultBaseUrl;
  if (typeof raw !== 'string') invalid('baseUrl', 'is required: the account’s own API host, e.g. https://xxxxx.api.infobip.com');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid('baseUrl', 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') invalid('baseUrl', 'must be an http or https URL');
  if (url.search !== '' || url.hash !== '') invalid('baseUrl', 'must not have a query or a fragment');
  const offlineFallback = settings.offlineFallback ?? false;
  if (typeof offlineFallback !== 'boolean') invalid('offlineFallback', 'must be true or false');
  return {
    baseUrl: url.toString().replace(/\/$/, ''),
    timeoutMs: wholeNumber(settings, 'timeoutMs', 5_000, 100, 60_000, invalid),
    offlineFallback,
  };
}

export function requireSecret(secrets: Record<string, string>, field: string): void {
  if (!secrets[field]) invalid(field, 'is required');
}

/** An HTTP answer of a provider: its status and its parsed JSON body (undefined when it was not JSON). */
export interface ProviderAnswer {
  status: number;
  body: unknown;
}

/**
 * A connector that only looks numbers up. `query` asks the provider; it throws LookupUnavailableError (or anything)
 * when the provider cannot answer, which becomes the number plan's answer when `offlineFallback` is set.
 */
export abstract class LookupConnector implements Connector {
  private ctx: ConnectorContext | null = null;

  constructor(
    readonly name: string,
    readonly kind: string,
    protected readonly settings: LookupSettings,
  ) {}

  protected abstract query(number: NumberLookup): Promise<LiveStatus>;

  async start(ctx: ConnectorContext): Promise<void> {
    this.ctx = ctx;
    ctx.health('UP');
  }

  async stop(): Promise<void> {
    this.ctx = null;
  }

  /** It carries no messages: a route that sends messages to it is a mistake of the operator's, refused for good. */
  async submit(batch: OutboundMessage[]): Promise<SubmitResult[]> {
    return batch.map(() => ({
      ok: false,
      temporary: false,
      code: 'NOT_A_CARRIER',
      reason: `${this.kind} connectors only look numbers up; route messages elsewhere`,
    }));
  }

  async numberStatus(number: NumberLookup): Promise<LiveStatus> {
    try {
      return await this.query(number);
    } catch (err) {
      const failure = err instanceof LookupUnavailableError ? err : new LookupUnavailableError(this.name, describeFailure(err, this.settings.timeoutMs));
      this.ctx?.logger.warn({ msisdn: number.msisdn, reason: failure.reason }, 'lookup provider did not answer');
      if (this.settings.offlineFallback) return numberPlanStatus(number);
      throw failure;
    }
  }

  /** Sends one request, within the timeout; a network failure or timeout throws LookupUnavailableError. */
  protected async call(url: string, init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }): Promise<ProviderAnswer> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, headers: { accept: 'application/json', ...init.headers }, signal: AbortSignal.timeout(this.settings.timeoutMs) });
    } catch (err) {
      throw new LookupUnavailableError(this.name, describeFailure(err, this.settings.timeoutMs));
    }
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      throw new LookupUnavailableError(this.name, describeFailure(err, this.settings.timeoutMs));
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  }

  protected unavailable(reason: string): LookupUnavailableError {
    return new LookupUnavailableError(this.name, reason);
  }
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `the provider did not answer within ${timeoutMs} ms`;
  const code = e?.cause?.code;
  return `the provider could not be reached${code ? ` (${code})` : ''}`;
}

/** A string field of a JSON object, or null. */
export function text(o: unknown, field: string): string | null {
  const v = (o as Record<string, unknown> | null | undefined)?.[field];
  return typeof v === 'string' && v !== '' ? v : null;
}

/** A boolean field of a JSON object, or null. */
export function flag(o: unknown, field: string): boolean | null {
  const v = (o as Record<string, unknown> | null | undefined)?.[field];
  return typeof v === 'boolean' ? v : null;
}

/** An object field of a JSON object, or null. */
export function object(o: unknown, field: string): Record<string, unknown> | null {
  const v = (o as Record<string, unknown> | null | undefined)?.[field];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
