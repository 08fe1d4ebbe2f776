// The server's configuration: every setting is declared once in settings.ts; this is what the rest of Tern uses.
import { settingsDocument, withSettings } from './document.ts';
import { fileKeys, readSettings } from './load.ts';
import { RULES } from './rules.ts';
import type { ValuesOf } from './setting.ts';
import { SECTIONS, SETTINGS } from './settings.ts';
import { fileSection, readConfigFile } from './sources.ts';

export { ConfigError } from './errors.ts';
export type { LogFormat, LogLevel } from './settings.ts';

export interface TernConfig extends ValuesOf<typeof SETTINGS> {
  /**
   * Connectors and routes from the configuration file (null when the file has no such section): created or
   * overwritten by name at start; those the file named before and no longer does are removed.
   */
  connectors: Array<Record<string, unknown>> | null;
  routes: Array<Record<string, unknown>> | null;
}

/**
 * Builds the configuration from the environment (a setting's variable, or with the suffix `_FILE` the file holding
 * its value), over an optional file named by TERN_CONFIG, over defaults. Every value is checked; the first bad one
 * throws a ConfigError naming the setting as the user wrote it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TernConfig {
  const file = env.TERN_CONFIG ? readConfigFile(env.TERN_CONFIG, fileKeys(SETTINGS)) : undefined;
  const values = readSettings(SETTINGS, RULES, env, file);
  return { ...values, connectors: fileSection(file, 'connectors'), routes: fileSection(file, 'routes') };
}

/** docs/configuration.md's text `document` with its settings written afresh from the declarations. */
export function configurationDocument(document: string): string {
  return withSettings(document, settingsDocument(SETTINGS, SECTIONS, RULES));
}
