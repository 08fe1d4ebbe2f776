// Types of the `sip` package (kirm/sip.js): the parts the SIP connector and its tests use.
declare module 'sip' {
  export interface SipUri {
    schema?: string;
    user?: string;
    password?: string;
    host: string;
    port?: number;
    params: Record<string, string | null | undefined>;
    headers?: Record<string, string>;
  }
  export interface NameAddr {
    name?: string;
    uri: string | SipUri;
    params: Record<string, string | null | undefined>;
  }
  export interface SipHeaders {
    via?: Array<{ version?: string; protocol?: string; host?: string; port?: number; params: Record<string, string | null | undefined> }>;
    from?: NameAddr;
    to?: NameAddr;
    'call-id'?: string;
    cseq?: { seq: number; method: string };
    contact?: NameAddr[];
    route?: NameAddr[];
    'record-route'?: NameAddr[];
    'content-type'?: string;
    'max-forwards'?: number | string;
    [name: string]: unknown;
  }
  export interface SipMessage {
    method?: string;
    uri?: string | SipUri;
    status?: number;
    reason?: string;
    version?: string;
    headers: SipHeaders;
    content?: string;
  }
  export interface Remote {
    protocol: string;
    address: string;
    port: number;
  }
  export interface SipStackOptions {
    port?: number;
    address?: string;
    publicAddress?: string;
    hostname?: string;
    udp?: boolean;
    tcp?: boolean;
    logger?: { send?(m: SipMessage, target: unknown): void; recv?(m: SipMessage, remote: Remote): void; error?(e: unknown): void };
  }
  export interface SipStack {
    send(message: SipMessage, onResponse?: (response: SipMessage) => void): void;
    destroy(): void;
    hostname(): string;
  }
  export function create(options: SipStackOptions, onRequest: (request: SipMessage, remote: Remote) => void): SipStack;
  export function makeResponse(request: SipMessage, status: number, reason?: string): SipMessage;
  export function parseUri(uri: string | SipUri): SipUri;
  export function stringifyUri(uri: string | SipUri): string;
  export function generateBranch(): string;
  const sip: {
    create: typeof create;
    makeResponse: typeof makeResponse;
    parseUri: typeof parseUri;
    stringifyUri: typeof stringifyUri;
    generateBranch: typeof generateBranch;
  };
  export default sip;
}

declare module 'sip/digest.js' {
  import type { SipMessage } from 'sip';
  export interface DigestSession {
    realm?: string;
    [key: string]: unknown;
  }
  export function signRequest(
    session: DigestSession | null,
    request: SipMessage,
    response?: SipMessage,
    credentials?: { user: string; password: string },
  ): DigestSession | null;
  export function challenge(session: DigestSession, response: SipMessage): SipMessage;
  export function authenticateRequest(session: DigestSession, request: SipMessage, credentials?: { user: string; password: string; realm?: string }): boolean;
  const digest: { signRequest: typeof signRequest; challenge: typeof challenge; authenticateRequest: typeof authenticateRequest };
  export default digest;
}
