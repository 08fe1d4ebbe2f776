import { useState } from 'preact/hooks';
import { navigate } from '../router.ts';
import { redeemLink, signIn, signInWithPassword, useSession } from '../session.ts';
import { ErrorBox, useAction } from '../ui.tsx';

function firstPage(operatorOnly: boolean): string {
  return operatorOnly ? '/admin/organisations' : '/messages';
}

/** Email and password (a person), single sign-on (by email domain), or an API key pasted in. */
export function SignIn() {
  const s = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [ssoEmail, setSsoEmail] = useState('');
  const [key, setKey] = useState('');
  const person = useAction(async () => {
    await signInWithPassword(email.trim(), password);
    setPassword('');
    navigate('/messages');
  });
  const action = useAction(async (value: string) => {
    const kind = await signIn(value.trim());
    setKey('');
    navigate(kind === 'admin' && !s.channel ? firstPage(true) : firstPage(false));
  });
  const already = s.channel !== null || s.operator;
  return (
    <main class="signin" id="main">
      <h1 tabIndex={-1}>Tern console</h1>
      <form
        aria-label="Personal sign-in"
        onSubmit={(e) => {
          e.preventDefault();
          void person.run();
        }}
      >
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
        />
        <button type="submit" id="sign-in-password" disabled={person.busy}>
          {person.busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorBox error={person.error} />
      </form>
      <form
        aria-label="Company sign-in"
        onSubmit={(e) => {
          e.preventDefault();
          location.href = `/commons/v1/sso/start?email=${encodeURIComponent(ssoEmail.trim())}`;
        }}
      >
        <label for="sso-email">Work email, for single sign-on</label>
        <input
          id="sso-email"
          name="sso-email"
          type="email"
          autoComplete="email"
          required
          value={ssoEmail}
          onInput={(e) => setSsoEmail((e.target as HTMLInputElement).value)}
        />
        <button type="submit" id="sign-in-sso">
          Sign in with your company
        </button>
      </form>
      <form
        aria-label="Key sign-in"
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) void action.run(key);
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          aria-describedby="key-help"
        />
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in with the key'}
        </button>
        <ErrorBox error={action.error} />
      </form>
      <div id="key-help" class="help">
        <p>
          People sign in with their email and password, given by an invitation link from an owner or administrator of their organisation (or from the operator),
          or through their company's identity provider when their organisation has single sign-on.
        </p>
        <p>
          A channel's API key opens its messages, campaigns, consumption, balance, webhooks and keys. The operator key (<code>TERN_ADMIN_KEY</code>) opens the
          operator's pages: organisations, prices, connectors and the simulator. Sign in with one, then add the other with <em>Add a key</em>.
        </p>
        <p>
          <strong>Where is my key?</strong> On its first start, <code>npm start</code> prints a key for each demo channel (SMS, RCS and VOICE) after{' '}
          <q>key (shown once, keep it)</q>, and the operator key when <code>TERN_ADMIN_KEY</code> is not set. A lost channel key is replaced with the operator
          key: <code>tern admin keys create &lt;channelId&gt;</code> (or <code>POST /admin/v1/channels/&lt;channelId&gt;/credentials</code>).
        </p>
        <p>The key stays in this tab only (session storage) and is sent to this Tern only.</p>
      </div>
      {already ? (
        <p>
          <a href="#/messages">Back to the console</a>
        </p>
      ) : null}
    </main>
  );
}

/** A one-time link's page: accepting an invitation, or setting a new password; both choose a password. */
export function LinkPage({ kind, token }: { kind: 'invitation' | 'reset'; token: string }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const done = useAction(async () => {
    await redeemLink(kind, token, password, name.trim() || undefined);
    navigate('/messages');
  });
  return (
    <main class="signin" id="main">
      <h1 tabIndex={-1}>{kind === 'invitation' ? 'Join your organisation on Tern' : 'Choose a new password'}</h1>
      <form
        aria-label={kind === 'invitation' ? 'Accept the invitation' : 'Set a new password'}
        onSubmit={(e) => {
          e.preventDefault();
          void done.run();
        }}
      >
        {kind === 'invitation' ? (
          <>
            <label for="link-name">Your name</label>
            <input id="link-name" autoComplete="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </>
        ) : null}
        <label for="link-password">Password (12 characters or more)</label>
        <input
          id="link-password"
          type="password"
          autoComplete="new-password"
          minLength={12}
          maxLength={256}
          required
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
        />
        <button type="submit" id="link-submit" disabled={done.busy}>
          {kind === 'invitation' ? 'Join' : 'Set the password'}
        </button>
        <ErrorBox error={done.error} />
      </form>
    </main>
  );
}
