import type { Connector, ConnectorKind } from '../core/ports.ts';
import type { ConnectorDefinition } from '../core/routing/service.ts';

/** A voice message's recording (a WAV file), for the connectors that play it; null when it has none. */
export type VoiceAudioSource = (messageId: string) => Promise<{ wav: Buffer; durationMs: number } | null>;

/** What factories may need beyond a connector's own definition. */
export interface FactoryEnvironment {
  /** The server's simulator settings (TERN_SIMULATOR_*), under a simulator's own. */
  simulator: { submitLatencyMs: number; receiptLatencyMs: number };
  /** Voice recordings, for the connectors that place calls. */
  voiceAudio?: VoiceAudioSource;
}

/** One kind of connector: how to check its definitions, and how to make a live one. */
export interface ConnectorFactory extends ConnectorKind {
  create(definition: ConnectorDefinition, env: FactoryEnvironment): Connector;
}

/** Checks an optional whole number setting; answers its value or the default. */
export function wholeNumber(
  settings: Record<string, unknown>,
  field: string,
  fallback: number,
  min: number,
  max: number,
  fail: (field: string, reason: string) => never,
): number {
  const v = settings[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(field, `a whole number from ${min} to ${max}`);
  return v;
}
