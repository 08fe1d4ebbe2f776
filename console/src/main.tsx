import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './styles.css';
import { match, navigate, usePath } from './router.ts';
import { load, signOut, useSession } from './session.ts';
import { Balance } from './pages/balance.tsx';
import { CampaignDetail, Campaigns } from './pages/campaigns.tsx';
import { Consumption } from './pages/consumption.tsx';
import { Keys } from './pages/keys.tsx';
import { Senders } from './pages/senders.tsx';
import { Audit } from './pages/audit.tsx';
import { Lookup } from './pages/lookup.tsx';
import { MessageDetail } from './pages/message.tsx';
import { Messages } from './pages/messages.tsx';
import { Connectors, Organisations, Prices, Simulator } from './pages/operator.tsx';
import { Margins, Quality } from './pages/routing.tsx';
import { Send } from './pages/send.tsx';
import { Templates } from './pages/templates.tsx';
import { LinkPage, SignIn } from './pages/signin.tsx';
import { Users } from './pages/users.tsx';
import { Webhooks } from './pages/webhooks.tsx';

interface Route {
  path: string;
  title?: string;
  view: (params: Record<string, string>) => preact.JSX.Element;
  operator?: boolean;
  /** Shown to people whose role manages users (OWNER, ADMIN). */
  people?: boolean;
}

const ROUTES: Route[] = [
  { path: '/messages', title: 'Messages', view: () => <Messages /> },
  { path: '/messages/:id', view: (p) => <MessageDetail id={p.id!} /> },
  { path: '/send', title: 'Send', view: () => <Send /> },
  { path: '/campaigns', title: 'Campaigns', view: () => <Campaigns /> },
  { path: '/campaigns/:id', view: (p) => <CampaignDetail id={p.id!} /> },
  { path: '/consumption', title: 'Consumption', view: () => <Consumption /> },
  { path: '/balance', title: 'Balance', view: () => <Balance /> },
  { path: '/templates', title: 'Templates', view: () => <Templates /> },
  { path: '/webhooks', title: 'Webhooks', view: () => <Webhooks /> },
  { path: '/keys', title: 'Keys', view: () => <Keys /> },
  { path: '/senders', title: 'Senders', view: () => <Senders /> },
  { path: '/lookup', title: 'Lookup', view: () => <Lookup /> },
  { path: '/users', title: 'Users', view: () => <Users />, people: true },
  { path: '/audit', title: 'Audit log', view: () => <Audit key="organisation" operator={false} /> },
  { path: '/admin/organisations', title: 'Organisations', view: () => <Organisations />, operator: true },
  { path: '/admin/prices', title: 'Prices', view: () => <Prices />, operator: true },
  { path: '/admin/connectors', title: 'Connectors', view: () => <Connectors />, operator: true },
  { path: '/admin/margins', title: 'Margins', view: () => <Margins />, operator: true },
  { path: '/admin/quality', title: 'Quality', view: () => <Quality />, operator: true },
  { path: '/admin/simulator', title: 'Simulator', view: () => <Simulator />, operator: true },
  { path: '/admin/audit', title: 'Audit log', view: () => <Audit key="operator" operator />, operator: true },
];

function App() {
  const s = useSession();
  const path = usePath();
  const main = useRef<HTMLElement>(null);
  // On a phone the page list is behind a menu button; it closes when a page is chosen.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => void load(), []);
  useEffect(() => setMenuOpen(false), [path]);
  // Moving to another page moves the focus to its heading, as a page load would.
  useEffect(() => {
    main.current?.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
  }, [path]);

  if (!s.ready) return <p class="loading">Loading…</p>;
  // One-time links (an invitation, a password reset) open whoever is signed in.
  const linkKind = path.startsWith('/invitation?') ? 'invitation' : path.startsWith('/reset?') ? 'reset' : null;
  if (linkKind) return <LinkPage kind={linkKind} token={new URLSearchParams(path.split('?')[1]).get('token') ?? ''} />;
  const signedIn = s.channel !== null || s.operator || s.user !== null;
  if (!signedIn || path === '/signin') return <SignIn />;

  const managesPeople = s.user !== null && s.user.organisationId !== 'operator' && (s.user.role === 'OWNER' || s.user.role === 'ADMIN');
  const shown = (r: Route) => (r.operator ? s.operator : r.people ? managesPeople : s.channel !== null);
  const visible = ROUTES.filter((r) => r.title && shown(r));
  let view: preact.JSX.Element | null = null;
  for (const r of ROUTES) {
    const params = match(r.path, path);
    if (params && shown(r)) {
      view = r.view(params);
      break;
    }
  }
  if (!view && visible.length > 0) {
    navigate(visible[0]!.path);
    return null;
  }
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.querySelector<HTMLElement>('h1')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <button type="button" class="menu-button secondary" aria-expanded={menuOpen} aria-controls="pages" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <span class="brand">Tern</span>
        <span class="who">
          {s.channel ? (
            <>
              {s.channel.type} channel <strong>{s.channel.name}</strong>
              {s.organisation ? <> · {s.organisation.name}</> : null}
            </>
          ) : null}
          {s.user ? (
            <>
              {' '}
              · <strong id="who-user">{s.user.email}</strong> ({s.user.role})
            </>
          ) : null}
          {s.operator ? <span class="op">operator</span> : null}
        </span>
        <span class="top-actions">
          <a href="#/signin">Add a key</a>
          <button type="button" class="link" onClick={() => void signOut().then(() => navigate('/signin'))}>
            Sign out
          </button>
        </span>
      </header>
      <nav aria-label="Pages" id="pages" class={menuOpen ? 'nav open' : 'nav'}>
        <ul>
          {visible.map((r) => (
            <li key={r.path}>
              <a
                href={`#${r.path}`}
                aria-current={path.split('?')[0] === r.path || path.startsWith(`${r.path}/`) ? 'page' : undefined}
                class={r.operator ? 'op' : undefined}
              >
                {r.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main}>
        {view ?? (
          <>
            <h1 tabIndex={-1}>Nothing to show yet</h1>
            <p>Your organisation has no channel yet: the operator creates its channels.</p>
          </>
        )}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
