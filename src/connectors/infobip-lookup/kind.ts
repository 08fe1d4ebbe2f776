import type { ConnectorFactory } from '../kind.ts';
import { type LookupSettings, lookupSettings, requireSecret } from '../lookup-base.ts';
import { InfobipLookupConnector } from './connector.ts';

/**
 * `type: "INFOBIP_LOOKUP"`: live number lookups through Infobip Number Lookup. Settings: baseUrl (required: the
 * account's own API host, https://xxxxx.api.infobip.com), timeoutMs (5000), offlineFallback (false); secret: apiKey.
 */
export const INFOBIP_LOOKUP_KIND: ConnectorFactory = {
  secretFields: ['apiKey'],
  validate(settings, secrets) {
    const checked = lookupSettings('INFOBIP_LOOKUP', settings, null);
    requireSecret(secrets, 'apiKey');
    return { settings: { ...checked }, secrets };
  },
  create: (d) => new InfobipLookupConnector(d.name, d.settings as unknown as LookupSettings, d.secrets.apiKey ?? ''),
};
