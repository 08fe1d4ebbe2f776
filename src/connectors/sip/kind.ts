import { fail } from '../../core/errors.ts';
import type { ConnectorFactory } from '../kind.ts';
import { SipConnector } from './connector.ts';
import { parseSipSettings } from './settings.ts';

const invalid: (field: string, reason: string) => never = (field, reason) => fail('INVALID_REQUEST', reason, field);

/**
 * `type: "SIP"`: voice calls through a SIP trunk or registrar (README "Voice over SIP"). Settings: host, port (5060),
 * transport (UDP), username, domain, register, callerId, codecs (PCMA, PCMU), maxCalls (10), callsPerSecond (5),
 * ringTimeoutSeconds (30), repeat, dialPrefix, localAddress, localPort, keepaliveSeconds, trunkTimeoutMs; secret:
 * password.
 */
export const SIP_KIND: ConnectorFactory = {
  secretFields: ['password'],
  validate(settings, secrets) {
    const parsed = parseSipSettings(settings, secrets.password !== undefined && secrets.password !== '', invalid);
    return { settings: { ...parsed }, secrets };
  },
  create: (d, env) => {
    const settings = parseSipSettings(d.settings, d.secrets.password !== undefined && d.secrets.password !== '', (field, reason) => {
      throw new Error(`${field}: ${reason}`);
    });
    const audio = env.voiceAudio ?? (async () => null);
    return new SipConnector(d.name, settings, d.secrets.password ?? null, audio);
  },
};
