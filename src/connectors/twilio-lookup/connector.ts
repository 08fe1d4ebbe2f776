// Twilio Lookup v2 (https://www.twilio.com/docs/lookup/v2-api, the Line Type Intelligence and Line Status
// packages): GET {baseUrl}/v2/PhoneNumbers/{E.164}?Fields=line_type_intelligence,line_status with HTTP Basic auth
// (account SID and auth token). Twilio says which carrier serves the number now (line_type_intelligence's
// mobile_country_code, mobile_network_code, carrier_name) and whether the line is in service (line_status.status);
// it does not say whether the number was ported, so that is the carrier now against the one of the number's range.
import type { NumberLookup } from '../../core/lookup/enrich.ts';
import type { LiveStatus, NetworkRef } from '../../core/lookup/number-status.ts';
import { flag, LookupConnector, type LookupSettings, object, text } from '../lookup-base.ts';

export interface TwilioLookupSecrets {
  accountSid: string;
  authToken: string;
}

export const TWILIO_FIELDS = 'line_type_intelligence,line_status';

/** line_status.status → reachable. `active`: the line is in service; `inactive`: disconnected or not assigned. */
const REACHABLE: Readonly<Record<string, boolean | null>> = {
  reachable: true,
  active: true,
  unreachable: false,
  inactive: false,
  unknown: null,
};

export class TwilioLookupConnector extends LookupConnector {
  private readonly authorization: string;

  constructor(name: string, settings: LookupSettings, secrets: TwilioLookupSecrets) {
    super(name, 'TWILIO_LOOKUP', settings);
    this.authorization = `Basic ${Buffer.from(`${secrets.accountSid}:${secrets.authToken}`).toString('base64')}`;
  }

  protected async query(number: NumberLookup): Promise<LiveStatus> {
    const url = `${this.settings.baseUrl}/v2/PhoneNumbers/${encodeURIComponent(`+${number.msisdn}`)}?Fields=${encodeURIComponent(TWILIO_FIELDS)}`;
    const answer = await this.call(url, { method: 'GET', headers: { authorization: this.authorization } });
    if (answer.status !== 200) {
      // Twilio's error body: {code, message, more_info, status}.
      const code = (answer.body as { code?: unknown } | undefined)?.code;
      const message = text(answer.body, 'message');
      const what =
        answer.status === 401
          ? 'refused the account SID or auth token'
          : answer.status === 429
            ? 'is rate limiting this account'
            : `answered HTTP ${answer.status}`;
      throw this.unavailable(`Twilio ${what}${typeof code === 'number' ? ` (error ${code}${message ? `: ${message}` : ''})` : ''}`);
    }
    const valid = flag(answer.body, 'valid');
    if (valid === null) throw this.unavailable('Twilio answered without a `valid` field');
    return toLiveStatus(number, valid, object(answer.body, 'line_type_intelligence'), object(answer.body, 'line_status'));
  }
}

function toLiveStatus(number: NumberLookup, valid: boolean, lineType: Record<string, unknown> | null, lineStatus: Record<string, unknown> | null): LiveStatus {
  const original: NetworkRef | null = number.network !== null || number.mccMnc !== null ? { mccMnc: number.mccMnc, name: number.network } : null;
  const mcc = text(lineType, 'mobile_country_code');
  const mnc = text(lineType, 'mobile_network_code');
  const carrier = text(lineType, 'carrier_name');
  const current: NetworkRef | null =
    mcc !== null && mnc !== null ? { mccMnc: mcc + mnc, name: carrier } : carrier !== null ? { mccMnc: null, name: carrier } : null;
  const status = text(lineStatus, 'status');
  const reachable = valid ? (status === null ? null : (REACHABLE[status.toLowerCase()] ?? null)) : false;
  const ported = current?.mccMnc && number.mccMnc ? current.mccMnc !== number.mccMnc : null;
  return { valid, reachable, ported: valid ? ported : null, roaming: null, currentNetwork: valid ? current : null, originalNetwork: original };
}
