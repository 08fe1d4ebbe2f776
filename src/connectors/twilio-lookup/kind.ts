import type { ConnectorFactory } from '../kind.ts';
import { type LookupSettings, lookupSettings, requireSecret } from '../lookup-base.ts';
import { TwilioLookupConnector } from './connector.ts';

/**
 * `type: "TWILIO_LOOKUP"`: live number lookups through Twilio Lookup v2. Settings: baseUrl
 * (https://lookups.twilio.com), timeoutMs (5000), offlineFallback (false); secrets: accountSid, authToken.
 */
export const TWILIO_LOOKUP_KIND: ConnectorFactory = {
  secretFields: ['accountSid', 'authToken'],
  validate(settings, secrets) {
    const checked = lookupSettings('TWILIO_LOOKUP', settings, 'https://lookups.twilio.com');
    requireSecret(secrets, 'accountSid');
    requireSecret(secrets, 'authToken');
    return { settings: { ...checked }, secrets };
  },
  create: (d) =>
    new TwilioLookupConnector(d.name, d.settings as unknown as LookupSettings, {
      accountSid: d.secrets.accountSid ?? '',
      authToken: d.secrets.authToken ?? '',
    }),
};
