import { fail } from '../../core/errors.ts';
import { type ConnectorFactory, wholeNumber } from '../kind.ts';
import { parseServiceAccountKey, type ServiceAccountKey } from './auth.ts';
import { RbmConnector } from './connector.ts';

const invalid: (field: string, reason: string) => never = (field, reason) => fail('INVALID_REQUEST', reason, field);

const SETTINGS = ['agentId', 'baseUrl', 'timeoutMs'];
export const RBM_DEFAULT_BASE_URL = 'https://europe-rcsbusinessmessaging.googleapis.com';

/**
 * `type: "RBM"`: Google RCS Business Messaging, as one agent. Settings: agentId, baseUrl (the European host by
 * default; `https://us-rcsbusinessmessaging.googleapis.com` and `https://asia-…` are the others), timeoutMs (10000);
 * secrets: serviceAccountKey (the agent's service account JSON key, as a string), webhookClientToken (the client
 * token of the agent's webhook, which signs its events).
 */
export const RBM_KIND: ConnectorFactory = {
  secretFields: ['serviceAccountKey', 'webhookClientToken'],
  validate(settings, secrets) {
    for (const field of Object.keys(settings)) if (!SETTINGS.includes(field)) invalid(field, 'is not a setting of an RBM connector');
    const agentId = settings.agentId;
    if (typeof agentId !== 'string' || !/^[A-Za-z0-9_.@-]{1,128}$/.test(agentId)) invalid('agentId', 'is required: the agent’s id (letters, digits, _ . @ -)');
    const baseUrl = settings.baseUrl ?? RBM_DEFAULT_BASE_URL;
    if (typeof baseUrl !== 'string') invalid('baseUrl', 'must be an http(s) URL');
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      return invalid('baseUrl', 'must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') invalid('baseUrl', 'must be an http or https URL');
    if (url.search !== '' || url.hash !== '') invalid('baseUrl', 'must not have a query or a fragment');
    if (!secrets.serviceAccountKey) invalid('serviceAccountKey', 'is required: the service account’s JSON key');
    const key = parseServiceAccountKey(secrets.serviceAccountKey);
    if (typeof key === 'string') invalid('serviceAccountKey', key);
    if (!secrets.webhookClientToken) invalid('webhookClientToken', 'is required: the client token set on the agent’s webhook');
    return {
      settings: { agentId, baseUrl: url.toString().replace(/\/$/, ''), timeoutMs: wholeNumber(settings, 'timeoutMs', 10_000, 100, 120_000, invalid) },
      secrets,
    };
  },
  create: (d) =>
    new RbmConnector(d.name, {
      agentId: d.settings.agentId as string,
      baseUrl: d.settings.baseUrl as string,
      serviceAccountKey: JSON.parse(d.secrets.serviceAccountKey ?? '{}') as ServiceAccountKey,
      webhookClientToken: d.secrets.webhookClientToken ?? '',
      timeoutMs: d.settings.timeoutMs as number,
    }),
};
