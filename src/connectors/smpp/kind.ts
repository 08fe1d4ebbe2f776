import { fail } from '../../core/errors.ts';
import type { ConnectorFactory } from '../kind.ts';
import { SmppConnector } from './connector.ts';
import { parseSmppSettings, type SmppConnectorSettings } from './settings.ts';

const invalid: (field: string, reason: string) => never = (field, reason) => fail('INVALID_REQUEST', reason, field);

/** `type: "SMPP"`: a client of an operator's SMSC. Settings in settings.ts (README "Connecting to an operator"); secret: password. */
export const SMPP_KIND: ConnectorFactory = {
  secretFields: ['password'],
  validate(settings, secrets) {
    const parsed = parseSmppSettings(settings, invalid);
    if (secrets.password === undefined) invalid('password', 'is required');
    if (secrets.password!.length > 64 || !/^[\x20-\x7e]*$/.test(secrets.password!)) invalid('password', 'at most 64 printable ASCII characters');
    return { settings: parsed as unknown as Record<string, unknown>, secrets };
  },
  create: (d) => new SmppConnector(d.name, d.settings as unknown as SmppConnectorSettings, d.secrets.password ?? ''),
};
