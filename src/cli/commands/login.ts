import { Client } from '../client.ts';
import type { Context } from '../context.ts';
import { CliError, EXIT } from '../io.ts';
import { DEFAULT_URL, profilePath, readProfile, removeProfile, writeProfile } from '../profile.ts';
import { line } from '../output.ts';

/**
 * `tern login`: checks a key against Tern and keeps it with the URL in the profile file (readable by its owner only).
 * The key comes from --api-key / --admin-key or, so that it stays out of the shell's history, from standard input:
 * typed at the terminal without echo and ended by Enter, or the first line of what is piped in.
 */
export async function login(ctx: Context, o: { url?: string; apiKey?: string; admin?: boolean; adminKey?: string }): Promise<void> {
  const io = ctx.io;
  const profile = readProfile(io.env);
  const url = (o.url ?? io.env.TERN_URL ?? profile.url ?? DEFAULT_URL).replace(/\/+$/, '');
  const admin = o.admin === true || o.adminKey !== undefined;
  let key = admin ? o.adminKey : o.apiKey;
  if (key === undefined) {
    // At a terminal the key is typed (or pasted) unseen and ends at Enter; piped, it is the first line.
    key = io.readSecret
      ? (await io.readSecret(`${admin ? 'Operator key' : 'API key'} (hidden, then Enter): `)).trim()
      : ((await io.readStdin()).split(/\r?\n/).find((l) => l.trim() !== '') ?? '').trim();
  }
  if (!key) throw new CliError('no key given: --api-key KEY, --admin-key KEY, or the key on standard input', EXIT.USAGE);
  const client = new Client({ url, apiKey: key, adminKey: key });
  let what: string;
  if (admin) {
    await client.get('/admin/v1/organisations?pageSize=1', { admin: true });
    what = 'the operator key';
  } else {
    const channel = (await client.get('/commons/v1/channels')).items[0];
    what = `the key of ${channel.type} channel ${channel.name} (${channel.channelId})`;
  }
  const path = writeProfile(io.env, { ...profile, url, ...(admin ? { adminKey: key } : { apiKey: key }) });
  line(io, `Signed in to ${url} with ${what}; kept in ${path}.`);
}

export async function logout(ctx: Context): Promise<void> {
  const path = removeProfile(ctx.io.env);
  line(ctx.io, path ? `Removed ${path}.` : `No profile at ${profilePath(ctx.io.env)}.`);
}
