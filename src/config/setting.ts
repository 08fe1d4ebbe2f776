import type { Kind, Written } from './kinds.ts';

/** Where a setting's row goes in docs/configuration.md. */
export type Section = 'listeners' | 'database' | 'logs' | 'messages' | 'retention' | 'traffic' | 'cluster';

/** One setting, stated once: the loader, the type of the configuration and its documentation all come from here. */
export interface Setting<T> {
  readonly env: string;
  /** Its key in the TERN_CONFIG file: the variable's name in camelCase without `TERN_`. */
  readonly fileKey: string;
  readonly kind: Kind<T>;
  /** As a user would write it (checked by `kind` like any value); null: unset. A function: worked out at start. */
  readonly default: Written | (() => Written);
  /** The default as the documentation says it, when its value alone would not say it well. */
  readonly documentedDefault?: string;
  /** One line of Markdown for the documentation: what the setting does. */
  readonly doc: string;
  readonly section: Section;
  /** Its value is a secret (a key, a password in a URL): an error never repeats it. */
  readonly secret: boolean;
  /** A name the setting had before, still read (environment and file) when the setting itself is not set. */
  readonly formerly?: string;
}

interface Declaration<T> {
  env: string;
  kind: Kind<T>;
  doc: string;
  section: Section;
  documentedDefault?: string;
  secret?: boolean;
  formerly?: string;
}

/** `TERN_HTTP_PORT` → `httpPort`. */
export function fileKeyOf(env: string): string {
  return env
    .replace(/^TERN_/, '')
    .toLowerCase()
    .replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A setting that always has a value: its default when nobody sets it. */
export function setting<T>(d: Declaration<T> & { default: Written | (() => Written) }): Setting<T> {
  return { ...d, fileKey: fileKeyOf(d.env), secret: d.secret ?? false };
}

/** A setting that may stay unset (null); the documentation says what that means. */
export function optional<T>(d: Declaration<T> & { documentedDefault: string }): Setting<T | null> {
  return { ...d, default: null, fileKey: fileKeyOf(d.env), secret: d.secret ?? false };
}

/** A tree of settings, shaped as the configuration it gives. */
export type SettingTree = { readonly [key: string]: Setting<unknown> | SettingTree };

/** The configuration a tree of settings gives: each setting replaced by its value. */
export type ValuesOf<T> = T extends Setting<infer V> ? V : { -readonly [K in keyof T]: ValuesOf<T[K]> };

export function isSetting(node: Setting<unknown> | SettingTree): node is Setting<unknown> {
  return typeof (node as Setting<unknown>).env === 'string' && typeof (node as Setting<unknown>).kind === 'object';
}

/** Every setting of a tree, in the order declared. */
export function settingsOf(tree: SettingTree): Setting<unknown>[] {
  return Object.values(tree).flatMap((node) => (isSetting(node) ? [node] : settingsOf(node)));
}

export interface RuleContext {
  /** The setting's name as the user wrote it: its variable, or its key in the configuration file. */
  name(setting: Setting<unknown>): string;
  /** Stops the start with an error naming `setting` as the user wrote it. */
  refuse(setting: Setting<unknown>, message: string): never;
}

export interface Rule<V> {
  /** The rule in a sentence of Markdown, for the documentation. */
  says: string;
  check(values: V, ctx: RuleContext): void;
}
