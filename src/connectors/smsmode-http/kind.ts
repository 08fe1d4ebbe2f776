import { fail } from '../../core/errors.ts';
import { type ConnectorFactory, wholeNumber } from '../kind.ts';
import { SmsmodeHttpConnector } from './connector.ts';

const invalid: (field: string, reason: string) => never = (field, reason) => fail('INVALID_REQUEST', reason, field);

const SETTINGS = ['baseUrl', 'tps', 'maxConnections', 'timeoutMs', 'pollAfterSeconds'];

/**
 * `type: "SMSMODE_HTTP"`: an upstream that speaks the smsmode REST API. Settings: baseUrl, tps (0), maxConnections
 * (16), timeoutMs (10000), pollAfterSeconds (600); secrets: apiKey, webhookSecret (optional).
 */
export const SMSMODE_HTTP_KIND: ConnectorFactory = {
  secretFields: ['apiKey', 'webhookSecret'],
  validate(settings, secrets) {
    for (const field of Object.keys(settings)) if (!SETTINGS.includes(field)) invalid(field, 'is not a setting of an SMSMODE_HTTP connector');
    const baseUrl = settings.baseUrl;
    if (typeof baseUrl !== 'string') invalid('baseUrl', 'is required, e.g. https://rest.smsmode.com');
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      return invalid('baseUrl', 'must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') invalid('baseUrl', 'must be an http or https URL');
    if (url.search !== '' || url.hash !== '') invalid('baseUrl', 'must not have a query or a fragment');
    if (!secrets.apiKey) invalid('apiKey', 'is required');
    if (secrets.webhookSecret !== undefined && !/^whsec_[A-Za-z0-9+/=]{8,}$/.test(secrets.webhookSecret)) {
      invalid('webhookSecret', 'a Standard Webhooks secret: whsec_ then base64');
    }
    return {
      settings: {
        baseUrl: url.toString().replace(/\/$/, ''),
        tps: wholeNumber(settings, 'tps', 0, 0, 100_000, invalid),
        maxConnections: wholeNumber(settings, 'maxConnections', 16, 1, 1024, invalid),
        timeoutMs: wholeNumber(settings, 'timeoutMs', 10_000, 100, 120_000, invalid),
        pollAfterSeconds: wholeNumber(settings, 'pollAfterSeconds', 600, 1, 86_400, invalid),
      },
      secrets,
    };
  },
  create: (d) =>
    new SmsmodeHttpConnector(d.name, {
      baseUrl: d.settings.baseUrl as string,
      apiKey: d.secrets.apiKey ?? '',
      tps: d.settings.tps as number,
      maxConnections: d.settings.maxConnections as number,
      timeoutMs: d.settings.timeoutMs as number,
      pollAfterMs: (d.settings.pollAfterSeconds as number) * 1000,
      webhookSecret: d.secrets.webhookSecret ?? null,
    }),
};
