import { render } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import './styles.css';
import { match, navigate, usePath } from './router.ts';
import { load, signOut, useSession } from './session.ts';
import { Balance } from './pages/balance.tsx';
import { CampaignDetail, Campaigns } from './pages/campaigns.tsx';
import { Consumption } from './pages/consumption.tsx';
import { Keys } from './pages/keys.tsx';
import { Lookup } from './pages/lookup.tsx';
import { MessageDetail } from './pages/message.tsx';
import { Messages } from './pages/messages.tsx';
import { Connectors, Organisations, Prices, Simulator } from './pages/operator.tsx';
import { Send } from './pages/send.tsx';
import { SignIn } from './pages/signin.tsx';
import { Webhooks } from './pages/webhooks.tsx';

interface Route {
  path: string;
  title?: string;
  view: (params: Record<string, string>) => preact.JSX.Element;
  operator?: boolean;
}

const ROUTES: Route[] = [
  { path: '/messages', title: 'Messages', view: () => <Messages /> },
  { path: '/messages/:id', view: (p) => <MessageDetail id={p.id!} /> },
  { path: '/send', title: 'Send', view: () => <Send /> },
  { path: '/campaigns', title: 'Campaigns', view: () => <Campaigns /> },
  { path: '/campaigns/:id', view: (p) => <CampaignDetail id={p.id!} /> },
  { path: '/consumption', title: 'Consumption', view: () => <Consumption /> },
  { path: '/balance', title: 'Balance', view: () => <Balance /> },
  { path: '/webhooks', title: 'Webhooks', view: () => <Webhooks /> },
  { path: '/keys', title: 'Keys', view: () => <Keys /> },
  { path: '/lookup', title: 'Lookup', view: () => <Lookup /> },
  { path: '/admin/organisations', title: 'Organisations', view: () => <Organisations />, operator: true },
  { path: '/admin/prices', title: 'Prices', view: () => <Prices />, operator: true },
  { path: '/admin/connectors', title: 'Connectors', view: () => <Connectors />, operator: true },
  { path: '/admin/simulator', title: 'Simulator', view: () => <Simulator />, operator: true },
];

function App() {
  const s = useSession();
  const path = usePath();
  const main = useRef<HTMLElement>(null);
  useEffect(() => void load(), []);
  // Moving to another page moves the focus to its heading, as a page load would.
  useEffect(() => {
    main.current?.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
  }, [path]);

  if (!s.ready) return <p class="loading">Loading…</p>;
  const signedIn = s.channel !== null || s.operator;
  if (!signedIn || path === '/signin') return <SignIn />;

  const visible = ROUTES.filter((r) => r.title && (r.operator ? s.operator : s.channel !== null));
  let view: preact.JSX.Element | null = null;
  for (const r of ROUTES) {
    const params = match(r.path, path);
    if (params && (r.operator ? s.operator : s.channel !== null)) {
      view = r.view(params);
      break;
    }
  }
  if (!view) {
    navigate(visible[0]!.path);
    return null;
  }
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.querySelector<HTMLElement>('h1')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Tern</span>
        <span class="who">
          {s.channel ? (
            <>
              {s.channel.type} channel <strong>{s.channel.name}</strong>
              {s.organisation ? <> · {s.organisation.name}</> : null}
            </>
          ) : null}
          {s.operator ? <span class="op">operator</span> : null}
        </span>
        <span class="top-actions">
          <a href="#/signin">Add a key</a>
          <button type="button" class="link" onClick={() => (signOut(), navigate('/signin'))}>
            Sign out
          </button>
        </span>
      </header>
      <nav aria-label="Pages" class="nav">
        <ul>
          {visible.map((r) => (
            <li key={r.path}>
              <a href={`#${r.path}`} aria-current={path === r.path || path.startsWith(`${r.path}/`) ? 'page' : undefined} class={r.operator ? 'op' : undefined}>
                {r.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main}>
        {view}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
