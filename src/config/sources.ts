// Where a setting's value is written: `<variable>_FILE`, the variable, the TERN_CONFIG file — the first that has it.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './errors.ts';
import { fileKeyOf } from './setting.ts';

/** The TERN_CONFIG file: its path and its object of settings. */
export interface ConfigFile {
  path: string;
  values: Record<string, unknown>;
}

/** How a value was written: its text or scalar, and the name under which the user wrote it. */
export interface Found {
  written: unknown;
  /** The variable, or the key of the configuration file. */
  name: string;
  /** The configuration file, when the value is in it. */
  file?: string;
}

/** Sections only the configuration file has: operator connections and routes, kept in git by some operators. */
export const FILE_SECTIONS = ['connectors', 'routes'] as const;

/** Reads the configuration file; a key that is neither one of `keys` nor a section is refused. */
export function readConfigFile(path: string, keys: ReadonlySet<string>): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('TERN_CONFIG', `cannot read ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new ConfigError('TERN_CONFIG', `cannot parse ${path}: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError('TERN_CONFIG', `${path} must hold an object of settings`);
  }
  for (const key of Object.keys(parsed)) {
    if (!keys.has(key) && !(FILE_SECTIONS as readonly string[]).includes(key)) {
      throw new ConfigError('TERN_CONFIG', `unknown setting "${key}" in ${path}`);
    }
  }
  return { path, values: parsed as Record<string, unknown> };
}

/** A section of the configuration file (a list of objects), or null when the file has none. */
export function fileSection(file: ConfigFile | undefined, name: (typeof FILE_SECTIONS)[number]): Array<Record<string, unknown>> | null {
  const v = file?.values[name];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.some((e) => e === null || typeof e !== 'object' || Array.isArray(e))) {
    throw new ConfigError('TERN_CONFIG', `"${name}" must be a list of objects`);
  }
  return v as Array<Record<string, unknown>>;
}

/**
 * `<variable>_FILE` names a file holding the setting's value (container secrets, systemd credentials): the file's
 * content, without the white space (a final line break) around it. Undefined when the variable is not set. It wins
 * over `<variable>` itself, which an image's defaults may have set.
 */
function fromSettingFile(env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const path = env[`${variable}_FILE`];
  if (path === undefined || path === '') return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${variable}_FILE`, `cannot read ${path}: ${(err as Error).message}`);
  }
  const value = text.trim();
  if (value === '') throw new ConfigError(`${variable}_FILE`, `${path} is empty`);
  return value;
}

/**
 * The value of the setting whose variable is `variable`, or undefined when nobody set it (an empty variable, or
 * null in the configuration file, is unset). A value read from `<variable>_FILE` is named by its variable.
 */
export function find(variable: string, env: NodeJS.ProcessEnv, file: ConfigFile | undefined): Found | undefined {
  const fromFile = fromSettingFile(env, variable);
  if (fromFile !== undefined) return { written: fromFile, name: variable };
  const fromEnv = env[variable];
  if (fromEnv !== undefined && fromEnv !== '') return { written: fromEnv, name: variable };
  const key = fileKeyOf(variable);
  const inFile = file?.values[key];
  if (inFile !== undefined && inFile !== null) return { written: inFile, name: key, file: file!.path };
  return undefined;
}
