import { fail } from '../../core/errors.ts';
import { type ConnectorFactory, wholeNumber } from '../kind.ts';
import { Simulator, simulatorSettings } from './connector.ts';

const invalid: (field: string, reason: string) => never = (field, reason) => fail('INVALID_REQUEST', reason, field);

/** `type: "SIMULATOR"`: the embedded simulated network. Settings: submitLatencyMs, receiptLatencyMs, readDelayMs, tps, failedDeliveryPercent. */
export const SIMULATOR_KIND: ConnectorFactory = {
  secretFields: [],
  validate(settings) {
    const out: Record<string, unknown> = {};
    for (const field of Object.keys(settings)) {
      if (!['submitLatencyMs', 'receiptLatencyMs', 'readDelayMs', 'tps', 'failedDeliveryPercent'].includes(field))
        invalid(field, 'is not a setting of the simulator');
      out[field] = wholeNumber(settings, field, 0, 0, field === 'tps' ? 100_000 : field === 'failedDeliveryPercent' ? 100 : 3_600_000, invalid);
    }
    return { settings: out, secrets: {} };
  },
  create: (d, env) => new Simulator(d.name, simulatorSettings(d.settings, env.simulator)),
};
