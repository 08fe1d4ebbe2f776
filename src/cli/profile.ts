import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, EXIT, type Io } from './io.ts';

/** What `tern login` keeps: the base URL and the keys. */
export interface Profile {
  url?: string;
  apiKey?: string;
  adminKey?: string;
}

/** `TERN_PROFILE`, else `$XDG_CONFIG_HOME/tern/profile.json` (`~/.config/tern/profile.json`). */
export function profilePath(env: NodeJS.ProcessEnv): string {
  if (env.TERN_PROFILE) return env.TERN_PROFILE;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'tern', 'profile.json');
}

export function readProfile(env: NodeJS.ProcessEnv): Profile {
  const path = profilePath(env);
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Profile;
  } catch (err) {
    throw new CliError(`the profile ${path} is not readable JSON (${(err as Error).message}): run tern login again`, EXIT.USAGE);
  }
}

/** Written readable by its owner only: it holds keys. */
export function writeProfile(env: NodeJS.ProcessEnv, profile: Profile): string {
  const path = profilePath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

export function removeProfile(env: NodeJS.ProcessEnv): string | null {
  const path = profilePath(env);
  if (!existsSync(path)) return null;
  rmSync(path);
  return path;
}

/** Where to connect and with which keys: the environment wins over the profile. */
export interface Connection {
  url: string;
  apiKey: string | null;
  adminKey: string | null;
}

export const DEFAULT_URL = 'http://localhost:8080';

export function connection(io: Io): Connection {
  const profile = readProfile(io.env);
  return {
    url: (io.env.TERN_URL || profile.url || DEFAULT_URL).replace(/\/+$/, ''),
    apiKey: io.env.TERN_API_KEY || profile.apiKey || null,
    adminKey: io.env.TERN_ADMIN_KEY || profile.adminKey || null,
  };
}
