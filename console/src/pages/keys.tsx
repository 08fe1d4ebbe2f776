import { useState } from 'preact/hooks';
import { call, keys as storedKeys, post } from '../api.ts';
import { when } from '../format.ts';
import { useSession } from '../session.ts';
import { Copy, Empty, ErrorBox, Field, Notice, Page, useAction, useLoad } from '../ui.tsx';

const ROLES = ['ADMIN', 'MANAGER', 'USER', 'MESSAGE'];

function ApiKeys({ channelId }: { channelId: string }) {
  const list = useLoad(() => call('GET', `/commons/v1/channels/${channelId}/credentials`), [channelId]);
  const [name, setName] = useState('');
  const [role, setRole] = useState('USER');
  const [created, setCreated] = useState<any>(null);
  const own = storedKeys().apiKey ?? '';
  const create = useAction(async () => {
    setCreated(await post(`/commons/v1/channels/${channelId}/credentials`, { name, roles: [role] }));
    setName('');
    list.reload();
  });
  const revoke = useAction(async (id: string) => {
    if (!confirm('Revoke this key? Requests made with it are refused from now on.')) return;
    await call('DELETE', `/commons/v1/channels/${channelId}/credentials/${id}`);
    list.reload();
  });
  return (
    <section aria-labelledby="api-keys">
      <h2 id="api-keys">API keys</h2>
      <form
        class="row"
        aria-label="New API key"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <Field id="k-name" label="Name">
          <input id="k-name" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="k-role" label="Role">
          <select id="k-role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
            {ROLES.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
        </Field>
        <div class="field buttons">
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
        </div>
      </form>
      <ErrorBox error={create.error} />
      {created ? (
        <Notice>
          Key <strong>{created.name}</strong> created. Copy it now, it is not shown again: <code data-testid="new-key">{created.value}</code>{' '}
          <Copy text={created.value} />
        </Notice>
      ) : null}
      <ErrorBox error={list.error ?? revoke.error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col" class="opt">
                Roles
              </th>
              <th scope="col">State</th>
              <th scope="col" class="opt">
                Created
              </th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((c: any) => (
              <tr data-credential-id={c.credentialId}>
                <td>{c.name}</td>
                <td>
                  <code>{c.keyPrefix}…</code>
                  {own.startsWith(c.keyPrefix) && c.state === 'ACTIVE' ? <span class="hint"> (this session)</span> : null}
                </td>
                <td class="opt">{c.roles.join(', ')}</td>
                <td>{c.state}</td>
                <td class="opt">{when(c.creationDate)}</td>
                <td>
                  {c.state === 'ACTIVE' && !own.startsWith(c.keyPrefix) ? (
                    <button type="button" class="small danger" onClick={() => void revoke.run(c.credentialId)}>
                      Revoke
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Smpp({ channelId }: { channelId: string }) {
  const list = useLoad(() => call('GET', `/commons/v1/channels/${channelId}/smpp-credentials`), [channelId]);
  const sessions = useLoad(() => call('GET', `/commons/v1/channels/${channelId}/smpp-sessions`), [channelId]);
  const [systemId, setSystemId] = useState('');
  const [password, setPassword] = useState('');
  const [allowedIps, setAllowedIps] = useState('');
  const create = useAction(async () => {
    await post(`/commons/v1/channels/${channelId}/smpp-credentials`, {
      systemId,
      password,
      ...(allowedIps.trim() && { allowedIps: allowedIps.split(/[\s,]+/).filter(Boolean) }),
    });
    setSystemId('');
    setPassword('');
    list.reload();
  });
  const remove = useAction(async (id: string) => {
    if (!confirm('Delete this SMPP credential? New binds are refused and bound sessions can no longer submit.')) return;
    await call('DELETE', `/commons/v1/channels/${channelId}/smpp-credentials/${id}`);
    list.reload();
    sessions.reload();
  });
  return (
    <section aria-labelledby="smpp">
      <h2 id="smpp">SMPP credentials</h2>
      <form
        class="row"
        aria-label="New SMPP credential"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <Field id="s-id" label="system_id">
          <input id="s-id" required maxLength={15} value={systemId} onInput={(e) => setSystemId((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="s-pw" label="Password (at most 8)">
          <input
            id="s-pw"
            type="password"
            autoComplete="new-password"
            required
            maxLength={8}
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field id="s-ips" label="Allowed addresses" hint="Addresses or CIDR ranges; empty: any">
          <input id="s-ips" value={allowedIps} onInput={(e) => setAllowedIps((e.target as HTMLInputElement).value)} />
        </Field>
        <div class="field buttons">
          <button type="submit" disabled={create.busy}>
            Create credential
          </button>
        </div>
      </form>
      <ErrorBox error={create.error ?? list.error ?? remove.error} />
      {list.data?.items.length === 0 ? <Empty>No SMPP credential on this channel.</Empty> : null}
      <ul class="plain">
        {(list.data?.items ?? []).map((c: any) => (
          <li>
            <code>{c.systemId}</code> · {c.state} · {c.maxBinds} binds · {c.tps ? `${c.tps} submits/s` : 'no rate limit'}
            {c.window ? ` · window ${c.window}` : ''}
            {c.allowedIps.length ? ` · from ${c.allowedIps.join(', ')}` : ''}{' '}
            {c.state === 'ACTIVE' ? (
              <button type="button" class="small danger" onClick={() => void remove.run(c.smppCredentialId)}>
                Delete
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      <h3>
        Live sessions{' '}
        <button type="button" class="small secondary" onClick={sessions.reload}>
          Refresh
        </button>
      </h3>
      <p class="hint">Bound to the Tern node serving this page.</p>
      {sessions.data?.items.length === 0 ? <Empty>No session bound.</Empty> : null}
      <ul class="plain">
        {(sessions.data?.items ?? []).map((x: any) => (
          <li>
            <code>{x.systemId}</code> · {x.bindMode} from {x.remoteAddress}
            {x.tls ? ' (TLS)' : ''} since {when(x.bindDate)}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function Keys() {
  const s = useSession();
  if (!s.roles.some((r) => r === 'ADMIN' || r === 'DEVELOPER')) {
    return (
      <Page title="Keys">
        <Notice>Keys and SMPP credentials are managed with an ADMIN key of the channel.</Notice>
      </Page>
    );
  }
  return (
    <Page title="Keys">
      <ApiKeys channelId={s.channel.channelId} />
      {s.channel.type === 'SMS' ? <Smpp channelId={s.channel.channelId} /> : null}
    </Page>
  );
}
