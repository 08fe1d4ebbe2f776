/**
 * The audit log's rules: which requests are changes to record, what each is called, and what of an object it may
 * keep (never a secret).
 */

/** What stands in an audit entry where a secret was. */
export const AUDIT_REDACTED = '[Redacted]';

/** Fields whose value is a secret (compared without case): keys shown once, passwords, signing secrets. */
const SECRET = /secret|password|^pass$|newpass|token|apikey|^value$|^key$|authorization/i;

/** A token given in a link's query: `…#/invitation?token=abc` (and `&token=`). */
const TOKEN_IN_URL = /([?&]token=)[^&#\s]+/gi;

/** A JSON value with every secret field's value replaced, at any depth. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  // A one-time link (an invitation, a password reset) carries its token in the URL: whoever reads the log must not be
  // able to use it.
  if (typeof value === 'string') return value.replace(TOKEN_IN_URL, `$1${AUDIT_REDACTED}`);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  // Secrets are text: a count or a flag named like one (`oneTimePasswords: 3`) stays.
  for (const [k, v] of Object.entries(value)) out[k] = SECRET.test(k) && typeof v === 'string' ? AUDIT_REDACTED : withoutSecrets(v);
  // An erasure's report names the number by its stand-in only: the log must not keep what was erased.
  if (typeof out.replacedBy === 'string' && 'msisdn' in out) out.msisdn = out.replacedBy;
  return out;
}

/** Paths whose changes are management: the operator's API and the organisations' own management routes. */
const MANAGED = /^\/(admin|commons)\/v1\/|^\/sms\/v1\/channels\/[^/]+\/templates/;
/** Requests on those paths that change nothing lasting: simulated traffic, route tests, lookups. */
const NOT_CHANGES = /^\/admin\/v1\/simulator\/|^\/admin\/v1\/routes\/test|^\/commons\/v1\/lookup/;

/** Whether a request (method, route pattern as declared, e.g. `/admin/v1/organisations/:id`) is a change to record. */
export function isAuditedChange(method: string, pattern: string): boolean {
  return ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) && MANAGED.test(pattern) && !NOT_CHANGES.test(pattern);
}

export interface AuditedAction {
  /** `organisation.update`, `credential.create`, `channel.rotate`, … */
  action: string;
  objectType: string;
  /** The path parameter naming the object, when the path names one. */
  objectParam: string | null;
  /** Whether the object existed before (its state before is read). */
  hasBefore: boolean;
}

const VERSIONS = /^v\d+$/;

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('ss')) return word;
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

function camel(word: string): string {
  return word.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * What a change is called, from its method and route pattern: the last named thing of the path is the object
 * (`PATCH /admin/v1/organisations/:id` → `organisation.update` of `:id`; `POST …/channels` → `channel.create`);
 * a POST to a verb under an object is that verb (`POST /commons/v1/channels/:id/webhook-secret/rotate` →
 * `webhookSecret.rotate`; `POST /admin/v1/organisations/:id/credit` → `organisation.credit`).
 */
export function auditedAction(method: string, pattern: string): AuditedAction {
  const parts = pattern.split('/').filter((p) => p !== '' && !VERSIONS.test(p));
  const segments = parts.slice(1); // without admin / commons / sms
  const last = segments[segments.length - 1] ?? '';
  const lastParam = [...segments].reverse().find((s) => s.startsWith(':')) ?? null;
  if (last.startsWith(':')) {
    const owner = segments[segments.length - 2] ?? 'object';
    const verb = method === 'DELETE' ? 'delete' : method === 'PUT' ? 'set' : 'update';
    return { action: `${camel(singular(owner))}.${verb}`, objectType: camel(singular(owner)), objectParam: last.slice(1), hasBefore: true };
  }
  if (method === 'POST' && (last.endsWith('s') || segments.length === 1)) {
    return { action: `${camel(singular(last))}.create`, objectType: camel(singular(last)), objectParam: null, hasBefore: false };
  }
  if (method === 'POST') {
    const before = segments[segments.length - 2] ?? '';
    const ownerIsParam = before.startsWith(':');
    const owner = ownerIsParam ? (segments[segments.length - 3] ?? 'object') : before;
    return {
      action: `${camel(singular(owner))}.${camel(last)}`,
      objectType: camel(singular(owner)),
      objectParam: ownerIsParam ? before.slice(1) : lastParam ? lastParam.slice(1) : null,
      hasBefore: false,
    };
  }
  const verb = method === 'DELETE' ? 'delete' : method === 'PUT' ? 'set' : 'update';
  return { action: `${camel(singular(last))}.${verb}`, objectType: camel(singular(last)), objectParam: lastParam ? lastParam.slice(1) : null, hasBefore: true };
}

/** The id of a created object in the answer: `<type>Id`, else `id`, else the first `…Id` field. */
export function createdId(objectType: string, answer: unknown): string | null {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return null;
  const a = answer as Record<string, unknown>;
  const named = a[`${objectType}Id`] ?? a.id ?? Object.entries(a).find(([k, v]) => k.endsWith('Id') && typeof v === 'string')?.[1];
  return typeof named === 'string' ? named : null;
}
