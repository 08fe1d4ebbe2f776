import { ConfigError } from './errors.ts';
import { fileKeyOf, isSetting, type Rule, type RuleContext, type Setting, type SettingTree, settingsOf, type ValuesOf } from './setting.ts';
import { type ConfigFile, find, type Found } from './sources.ts';

/** The keys of the configuration file a tree of settings reads (former names too). */
export function fileKeys(tree: SettingTree): Set<string> {
  return new Set(settingsOf(tree).flatMap((s) => [s.fileKey, ...(s.formerly === undefined ? [] : [fileKeyOf(s.formerly)])]));
}

/** An error about a secret never repeats it (kinds quote the values they refuse). */
function hideSecret(setting: Setting<unknown>, written: unknown, message: string): string {
  if (!setting.secret || (typeof written !== 'string' && typeof written !== 'number')) return message;
  return message.replaceAll(`"${String(written)}"`, '"…"');
}

/**
 * The values of a tree of settings, from the environment (a variable, or `<variable>_FILE`), over the configuration
 * file, over the defaults; then `rules`. The first value refused throws a ConfigError naming the setting as the user
 * wrote it.
 */
export function readSettings<T extends SettingTree>(tree: T, rules: ReadonlyArray<Rule<ValuesOf<T>>>, env: NodeJS.ProcessEnv, file?: ConfigFile): ValuesOf<T> {
  const found = new Map<Setting<unknown>, Found>();
  const value = (s: Setting<unknown>): unknown => {
    const at = find(s.env, env, file) ?? (s.formerly === undefined ? undefined : find(s.formerly, env, file));
    if (at === undefined) {
      const fallback = typeof s.default === 'function' ? (s.default as () => unknown)() : s.default;
      return fallback === null ? null : s.kind.parse(fallback);
    }
    found.set(s, at);
    try {
      return s.kind.parse(at.written);
    } catch (err) {
      throw new ConfigError(at.name, hideSecret(s, at.written, (err as Error).message), at.file);
    }
  };
  const walk = (node: SettingTree): Record<string, unknown> =>
    Object.fromEntries(Object.entries(node).map(([key, child]) => [key, isSetting(child) ? value(child) : walk(child)]));
  const values = walk(tree) as ValuesOf<T>;

  const ctx: RuleContext = {
    name: (s) => found.get(s)?.name ?? s.env,
    refuse(s, message) {
      const at = found.get(s);
      throw new ConfigError(at?.name ?? s.env, message, at?.file);
    },
  };
  for (const rule of rules) rule.check(values, ctx);
  return values;
}
