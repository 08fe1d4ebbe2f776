import { useState } from 'preact/hooks';
import { call, get, post, query } from '../api.ts';
import { when } from '../format.ts';
import { session, load, useSession } from '../session.ts';
import { Copy, Empty, ErrorBox, Field, Notice, Page, Status, useAction, useLoad } from '../ui.tsx';

function Urls({ channel }: { channel: any }) {
  const [status, setStatus] = useState(channel.defaultCallbackUrlStatus ?? '');
  const [mo, setMo] = useState(channel.defaultCallbackUrlMo ?? '');
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    // Only what changed; an emptied field removes its URL.
    const body: Record<string, string | null> = {};
    if (status !== (channel.defaultCallbackUrlStatus ?? '')) body.defaultCallbackUrlStatus = status || null;
    if (mo !== (channel.defaultCallbackUrlMo ?? '')) body.defaultCallbackUrlMo = mo || null;
    await call('PATCH', `/commons/v1/channels/${channel.channelId}`, { body });
    await load();
    setSaved(true);
  });
  return (
    <form
      class="form"
      aria-label="Callback URLs"
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        void save.run();
      }}
    >
      <h2>Callback URLs</h2>
      <p class="hint">Used when a message gives none. Status changes and replies are POSTed there as JSON, signed.</p>
      <Field id="w-status" label="Status URL (callbackUrlStatus)">
        <input
          id="w-status"
          type="url"
          value={status}
          onInput={(e) => setStatus((e.target as HTMLInputElement).value)}
          placeholder="https://example.com/tern/status"
        />
      </Field>
      <Field id="w-mo" label="Replies URL (callbackUrlMo)">
        <input id="w-mo" type="url" value={mo} onInput={(e) => setMo((e.target as HTMLInputElement).value)} />
      </Field>
      <button type="submit" disabled={save.busy}>
        Save
      </button>
      <ErrorBox error={save.error} />
      {saved ? <Notice>Saved.</Notice> : null}
    </form>
  );
}

function Secret({ channelId }: { channelId: string }) {
  const [secret, setSecret] = useState<any>(null);
  const reveal = useAction(async () => setSecret(await get(`/commons/v1/channels/${channelId}/webhook-secret`)));
  const rotate = useAction(async () => {
    if (!confirm('Rotate the signing secret? The current one keeps signing alongside for 24 hours.')) return;
    setSecret(await post(`/commons/v1/channels/${channelId}/webhook-secret/rotate`));
  });
  return (
    <section aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      <p class="hint">
        Deliveries carry Standard Webhooks headers (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>) signed with this
        secret.
      </p>
      {secret ? (
        <p>
          <code data-testid="secret">{secret.secret}</code> <Copy text={secret.secret} />
          {secret.previousSecret ? <span class="hint"> · the previous one signs too until {when(secret.previousSecretValidUntil)}</span> : null}
        </p>
      ) : null}
      <p class="actions">
        <button type="button" class="secondary" onClick={() => void (secret ? setSecret(null) : reveal.run())}>
          {secret ? 'Hide' : 'Reveal'}
        </button>
        <button type="button" class="danger" onClick={() => void rotate.run()} disabled={rotate.busy}>
          Rotate
        </button>
      </p>
      <ErrorBox error={reveal.error ?? rotate.error} />
    </section>
  );
}

export function Webhooks() {
  const s = useSession();
  const admin = s.roles.some((r) => r === 'ADMIN' || r === 'DEVELOPER');
  const failures = useLoad(
    async () => [
      ...(await get(`/commons/v1/webhooks/deliveries${query({ 'searchBy[status]': 'FAILED', pageSize: 20 })}`)).items,
      ...(await get(`/commons/v1/webhooks/deliveries${query({ 'searchBy[status]': 'PENDING', pageSize: 20 })}`)).items.filter((d: any) => d.attemptCount > 0),
    ],
    [],
  );
  return (
    <Page title="Webhooks">
      {admin ? <Urls channel={session().channel} /> : <p class="hint">An ADMIN key changes the callback URLs and reads the signing secret.</p>}
      {admin ? <Secret channelId={s.channel.channelId} /> : null}
      <h2>Recent failures</h2>
      <ErrorBox error={failures.error} />
      {failures.data?.length === 0 ? <Empty>No failed or retried delivery.</Empty> : null}
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">State</th>
              <th scope="col">URL</th>
              <th scope="col">Last answer</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {(failures.data ?? []).map((d: any) => (
              <tr>
                <td>{when(d.creationDate)}</td>
                <td>
                  <Status value={d.status} />
                </td>
                <td class="text">{d.url}</td>
                <td>{d.lastHttpStatus ?? d.lastError ?? '—'}</td>
                <td>
                  <a href={`#/messages/${d.messageId}`}>open</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}
