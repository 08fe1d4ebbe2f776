import { useState } from 'preact/hooks';
import { call, post } from '../api.ts';
import { when } from '../format.ts';
import { useSession } from '../session.ts';
import { Copy, Empty, ErrorBox, Field, Notice, Page, useAction, useLoad } from '../ui.tsx';

const ROLES = ['OWNER', 'ADMIN', 'DEVELOPER', 'SENDER', 'BILLING', 'VIEWER'];

/** The organisation's people (OWNER and ADMIN): invitations by link, roles, removal, password reset links. */
export function Users() {
  const s = useSession();
  const users = useLoad(() => call('GET', '/commons/v1/users'), []);
  const invitations = useLoad(() => call('GET', '/commons/v1/invitations'), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('SENDER');
  const [link, setLink] = useState<{ what: string; url: string } | null>(null);
  const invite = useAction(async () => {
    const inv = await post('/commons/v1/invitations', { email: email.trim(), role });
    setLink({ what: `Invitation for ${inv.email} (${inv.role})`, url: inv.url });
    setEmail('');
    invitations.reload();
  });
  const change = useAction(async (userId: string, next: string) => {
    await call('PATCH', `/commons/v1/users/${userId}`, { body: { role: next } });
    users.reload();
  });
  const remove = useAction(async (userId: string) => {
    await call('DELETE', `/commons/v1/users/${userId}`);
    users.reload();
  });
  const reset = useAction(async (u: any) => {
    const r = await post(`/commons/v1/users/${u.userId}/password-reset`);
    setLink({ what: `Password reset for ${u.email}`, url: r.url });
  });
  const grantable = s.roles.includes('OWNER') ? ROLES : ROLES.filter((r) => r !== 'OWNER');
  const items: any[] = users.data?.items ?? [];
  const pending: any[] = invitations.data?.items ?? [];
  return (
    <Page title="Users">
      <form
        class="row"
        aria-label="Invite someone"
        onSubmit={(e) => {
          e.preventDefault();
          void invite.run();
        }}
      >
        <Field id="invite-email" label="Email">
          <input id="invite-email" type="email" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </Field>
        <Field id="invite-role" label="Role">
          <select id="invite-role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
            {grantable.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
        </Field>
        <div class="field buttons">
          <button type="submit" id="invite-submit" disabled={invite.busy}>
            Invite
          </button>
        </div>
      </form>
      {link ? (
        <Notice>
          {link.what}: send this link to the person; it is shown once. <code id="one-time-link">{link.url}</code> <Copy text={link.url} />
        </Notice>
      ) : null}
      <ErrorBox error={invite.error ?? change.error ?? remove.error ?? reset.error ?? users.error} />
      {items.length === 0 && users.data ? <Empty>No user yet.</Empty> : null}
      {items.length > 0 ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Signs in with</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {items.map((u) => (
                <tr data-user-id={u.userId}>
                  <td>{u.email}</td>
                  <td>{u.name ?? ''}</td>
                  <td>
                    <select aria-label={`Role of ${u.email}`} value={u.role} onChange={(e) => void change.run(u.userId, (e.target as HTMLSelectElement).value)}>
                      {(u.role === 'OWNER' ? ROLES : grantable).map((r) => (
                        <option value={r}>{r}</option>
                      ))}
                    </select>
                  </td>
                  <td>{[u.password ? 'password' : null, u.singleSignOn ? 'single sign-on' : null].filter(Boolean).join(', ')}</td>
                  <td>{u.lastSignInDate ? when(u.lastSignInDate) : ''}</td>
                  <td>
                    <button type="button" class="link" onClick={() => void reset.run(u)}>
                      Reset link
                    </button>{' '}
                    {u.userId !== s.user?.userId ? (
                      <button type="button" class="link" onClick={() => void remove.run(u.userId)}>
                        Remove
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {pending.length > 0 ? (
        <>
          <h2>Invitations not yet accepted</h2>
          <ul>
            {pending.map((i) => (
              <li>
                {i.email} as {i.role}, until {when(i.expirationDate)}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </Page>
  );
}
