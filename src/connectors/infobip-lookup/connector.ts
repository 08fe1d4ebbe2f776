// Infobip Number Lookup (https://www.infobip.com/docs/api/channels/sms/number-lookup, "Number context: query"):
// POST {baseUrl}/number/1/query {"to":[…]} with `Authorization: App <apiKey>`, answered `{results:[{to, mccMnc,
// imsi, originalNetwork{networkName, networkPrefix, countryName, countryPrefix}, portedNetwork{…}, roamingNetwork{…},
// ported, roaming, status{groupId, groupName, id, name, description}, error{groupId, groupName, id, name,
// description, permanent}}]}`. The result's `mccMnc` is the network the subscriber is on now (its ported network when
// ported); `error` says why a subscriber is not reachable (EC_ABSENT_SUBSCRIBER) or does not exist
// (EC_UNKNOWN_SUBSCRIBER).
import type { NumberLookup } from '../../core/lookup/enrich.ts';
import type { LiveStatus, NetworkRef } from '../../core/lookup/number-status.ts';
import { flag, LookupConnector, type LookupSettings, object, text } from '../lookup-base.ts';

/** Errors that say the number belongs to no subscriber. */
const NO_SUBSCRIBER: ReadonlySet<string> = new Set(['EC_UNKNOWN_SUBSCRIBER', 'EC_UNIDENTIFIED_SUBSCRIBER']);

export class InfobipLookupConnector extends LookupConnector {
  private readonly authorization: string;

  constructor(name: string, settings: LookupSettings, apiKey: string) {
    super(name, 'INFOBIP_LOOKUP', settings);
    this.authorization = `App ${apiKey}`;
  }

  protected async query(number: NumberLookup): Promise<LiveStatus> {
    const answer = await this.call(`${this.settings.baseUrl}/number/1/query`, {
      method: 'POST',
      headers: { authorization: this.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ to: [number.msisdn] }),
    });
    if (answer.status !== 200) {
      // Infobip's error body: {requestError:{serviceException:{messageId, text}}}.
      const exception = object(object(answer.body, 'requestError'), 'serviceException');
      const id = text(exception, 'messageId');
      const said = text(exception, 'text');
      const what = answer.status === 401 ? 'refused the API key' : answer.status === 429 ? 'is rate limiting this account' : `answered HTTP ${answer.status}`;
      throw this.unavailable(`Infobip ${what}${id ? ` (${id}${said ? `: ${said}` : ''})` : ''}`);
    }
    const results = (answer.body as { results?: unknown } | undefined)?.results;
    const result = Array.isArray(results) ? (results.find((r) => text(r, 'to') === number.msisdn) ?? results[0]) : undefined;
    if (typeof result !== 'object' || result === null) throw this.unavailable('Infobip answered without a result for the number');
    return toLiveStatus(number, result as Record<string, unknown>, (reason) => this.unavailable(reason));
  }
}

function toLiveStatus(number: NumberLookup, r: Record<string, unknown>, unavailable: (reason: string) => Error): LiveStatus {
  const status = object(r, 'status');
  const error = object(r, 'error');
  const group = text(status, 'groupName');
  const errorName = text(error, 'name');
  if (group === 'REJECTED') throw unavailable(`Infobip rejected the query (${text(status, 'name') ?? 'REJECTED'})`);
  const ported = flag(r, 'ported');
  const roaming = flag(r, 'roaming');
  const mccMnc = text(r, 'mccMnc');
  const originalName = text(object(r, 'originalNetwork'), 'networkName');
  const currentName = ported ? (text(object(r, 'portedNetwork'), 'networkName') ?? null) : originalName;
  const current: NetworkRef | null = mccMnc !== null || currentName !== null ? { mccMnc, name: currentName } : null;
  // Not ported: the network it is on is the one of its range, MCC/MNC and all.
  const originalMccMnc = ported === false ? mccMnc : number.mccMnc;
  const original: NetworkRef | null =
    originalName !== null || originalMccMnc !== null ? { mccMnc: originalMccMnc, name: originalName ?? number.network } : null;

  let valid: boolean | null;
  let reachable: boolean | null;
  if (errorName !== null && NO_SUBSCRIBER.has(errorName)) {
    valid = false;
    reachable = false;
  } else if (group === 'DELIVERED') {
    valid = true;
    reachable = true;
  } else if (group === 'UNDELIVERABLE' || (errorName !== null && errorName !== 'NO_ERROR')) {
    // The subscriber exists but is absent, barred or not provisioned for SMS.
    valid = true;
    reachable = false;
  } else {
    valid = null;
    reachable = null;
  }
  return { valid, reachable, ported, roaming, currentNetwork: valid === false ? null : current, originalNetwork: original };
}
