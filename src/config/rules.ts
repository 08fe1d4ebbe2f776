// Rules between settings, checked once every setting has its value; docs/configuration.md lists them from here.
import type { Rule, ValuesOf } from './setting.ts';
import { SETTINGS } from './settings.ts';

type Values = ValuesOf<typeof SETTINGS>;

const S = SETTINGS;

export const RULES: ReadonlyArray<Rule<Values>> = [
  {
    says: '`TERN_SECRET_KEY` is required with PostgreSQL, the same on every node',
    check(v, ctx) {
      if (v.secretKey === null && v.databaseUrl.startsWith('postgres')) {
        ctx.refuse(
          S.secretKey,
          'is required with PostgreSQL: every node seals and opens the secrets kept in the database with it (e.g. `openssl rand -base64 32`, the same on all nodes)',
        );
      }
    },
  },
  {
    says: '`TERN_SMPP_TLS_PORT` needs `TERN_SMPP_TLS_CERT` and `TERN_SMPP_TLS_KEY`',
    check(v, ctx) {
      if (v.smppTlsPort !== null && (v.smppTlsCert === null || v.smppTlsKey === null)) {
        ctx.refuse(S.smppTlsPort, `needs ${ctx.name(S.smppTlsCert)} and ${ctx.name(S.smppTlsKey)} (PEM file paths)`);
      }
    },
  },
  {
    says: '`TERN_HTTPS_PORT` needs `TERN_HTTPS_CERT` and `TERN_HTTPS_KEY`, and either file needs the port',
    check(v, ctx) {
      if (v.httpsPort !== null && (v.httpsCert === null || v.httpsKey === null)) {
        ctx.refuse(S.httpsPort, `needs ${ctx.name(S.httpsCert)} and ${ctx.name(S.httpsKey)} (PEM file paths)`);
      }
      if (v.httpsPort === null && (v.httpsCert !== null || v.httpsKey !== null)) {
        ctx.refuse(v.httpsCert !== null ? S.httpsCert : S.httpsKey, `is set but ${ctx.name(S.httpsPort)} is not: HTTPS needs a port`);
      }
    },
  },
  {
    says: '`TERN_HTTP_HEADERS_TIMEOUT_SECONDS` is not longer than `TERN_HTTP_REQUEST_TIMEOUT_SECONDS` (the whole request includes its head)',
    check(v, ctx) {
      if (v.httpLimits.headersTimeoutMs > v.httpLimits.requestTimeoutMs) {
        ctx.refuse(S.httpLimits.headersTimeoutMs, `must not be longer than ${ctx.name(S.httpLimits.requestTimeoutMs)} (the whole request includes its head)`);
      }
    },
  },
  {
    says: '`TERN_WEBHOOK_SOCKETS_PER_ORGANISATION` is not more than `TERN_WEBHOOK_SOCKETS`',
    check(v, ctx) {
      if (v.webhookSockets.perOrganisation > v.webhookSockets.total) {
        ctx.refuse(S.webhookSockets.perOrganisation, `must not be more than ${ctx.name(S.webhookSockets.total)} (${v.webhookSockets.total})`);
      }
    },
  },
];
