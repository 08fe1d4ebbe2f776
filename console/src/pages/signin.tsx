import { useState } from 'preact/hooks';
import { navigate } from '../router.ts';
import { signIn, useSession } from '../session.ts';
import { ErrorBox, useAction } from '../ui.tsx';

export function SignIn() {
  const s = useSession();
  const [key, setKey] = useState('');
  const action = useAction(async (value: string) => {
    const kind = await signIn(value.trim());
    setKey('');
    navigate(kind === 'admin' && !s.channel ? '/admin/organisations' : '/messages');
  });
  const already = s.channel !== null || s.operator;
  return (
    <main class="signin" id="main">
      <h1 tabIndex={-1}>Tern console</h1>
      <form
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
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorBox error={action.error} />
      </form>
      <div id="key-help" class="help">
        <p>
          A channel's API key opens its messages, campaigns, consumption, balance, webhooks and keys. The operator key
          (<code>TERN_ADMIN_KEY</code>) opens the operator's pages: organisations, prices, connectors and the
          simulator. Sign in with one, then add the other with <em>Add a key</em>.
        </p>
        <p>
          <strong>Where is my key?</strong> On its first start, <code>npm start</code> prints a key for each demo
          channel (SMS, RCS and VOICE) after <q>key (shown once, keep it)</q>, and the operator key when{' '}
          <code>TERN_ADMIN_KEY</code> is not set. A lost channel key is replaced with the operator key:{' '}
          <code>tern admin keys create &lt;channelId&gt;</code> (or <code>POST /admin/v1/channels/&lt;channelId&gt;/credentials</code>).
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
