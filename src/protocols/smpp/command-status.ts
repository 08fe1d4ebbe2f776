import { SmppStatus } from './pdu.ts';

/**
 * What an SMSC's answer to a submit means for the message, from its command_status: one table for every status
 * SMPP 3.4 names (§5.1.3). `TEMPORARY` statuses are the SMSC's own trouble (busy, full, failing): the message is
 * tried again later, never failed. `THROTTLED` is temporary too and also tells the connector to slow down.
 * `PERMANENT` statuses are about the message itself (its destination, its sender, its fields): trying it again
 * gives the same answer, so it ends UNDELIVERABLE and is refunded. A status the table does not name (reserved or
 * vendor-specific) is permanent, as Kannel and Jasmin read it: retrying an answer nobody understands only delays it.
 */
export type SubmitStatusClass = 'OK' | 'THROTTLED' | 'TEMPORARY' | 'PERMANENT';

export interface SubmitStatusMeaning {
  /** The SMPP name (`ESME_RTHROTTLED`), or `0x…` for a status SMPP 3.4 does not name. */
  name: string;
  class: SubmitStatusClass;
  /** For permanent ones: the message's status detail (Tern's vocabulary). */
  detail?: string;
}

const NAMES: ReadonlyMap<number, string> = new Map(Object.entries(SmppStatus).map(([name, value]) => [value, name]));

type Row = [outcome: SubmitStatusClass, detail?: string];

const TABLE: Readonly<Record<keyof typeof SmppStatus, Row>> = {
  ESME_ROK: ['OK'],
  // Slow down: the SMSC takes fewer submits a second than we send.
  ESME_RTHROTTLED: ['THROTTLED'],
  // The SMSC's own state: try later, elsewhere if the route has another connector.
  ESME_RMSGQFUL: ['TEMPORARY'],
  ESME_RSYSERR: ['TEMPORARY'],
  ESME_RX_T_APPN: ['TEMPORARY'],
  ESME_RDELIVERYFAILURE: ['TEMPORARY'],
  ESME_RUNKNOWNERR: ['TEMPORARY'],
  // The bind is not in a state to submit (the SMSC lost it): the connection's fault, not the message's.
  ESME_RINVBNDSTS: ['TEMPORARY'],
  ESME_RALYBND: ['TEMPORARY'],
  ESME_RBINDFAIL: ['TEMPORARY'],
  ESME_RINVPASWD: ['TEMPORARY'],
  ESME_RINVSYSID: ['TEMPORARY'],
  ESME_RINVSYSTYP: ['TEMPORARY'],
  // The destination.
  ESME_RINVDSTADR: ['PERMANENT', 'INVALID_PHONE_NUMBER'],
  ESME_RINVDSTTON: ['PERMANENT', 'INVALID_PHONE_NUMBER'],
  ESME_RINVDSTNPI: ['PERMANENT', 'INVALID_PHONE_NUMBER'],
  ESME_RINVNUMDESTS: ['PERMANENT', 'INVALID_PHONE_NUMBER'],
  ESME_RINVDLNAME: ['PERMANENT', 'INVALID_PHONE_NUMBER'],
  ESME_RINVDESTFLAG: ['PERMANENT', 'INVALID_PHONE_NUMBER'],
  // The sender.
  ESME_RINVSRCADR: ['PERMANENT', 'INVALID_SENDER'],
  ESME_RINVSRCTON: ['PERMANENT', 'INVALID_SENDER'],
  ESME_RINVSRCNPI: ['PERMANENT', 'INVALID_SENDER'],
  // The message's fields, or a refusal the SMSC does not explain: the same message gets the same answer.
  ESME_RINVMSGLEN: ['PERMANENT', 'REJECTED'],
  ESME_RINVCMDLEN: ['PERMANENT', 'REJECTED'],
  ESME_RINVCMDID: ['PERMANENT', 'REJECTED'],
  ESME_RINVPRTFLG: ['PERMANENT', 'REJECTED'],
  ESME_RINVREGDLVFLG: ['PERMANENT', 'REJECTED'],
  ESME_RINVMSGID: ['PERMANENT', 'REJECTED'],
  ESME_RCANCELFAIL: ['PERMANENT', 'REJECTED'],
  ESME_RREPLACEFAIL: ['PERMANENT', 'REJECTED'],
  ESME_RINVSERTYP: ['PERMANENT', 'REJECTED'],
  ESME_RINVSUBREP: ['PERMANENT', 'REJECTED'],
  ESME_RINVESMCLASS: ['PERMANENT', 'REJECTED'],
  ESME_RCNTSUBDL: ['PERMANENT', 'REJECTED'],
  ESME_RSUBMITFAIL: ['PERMANENT', 'REJECTED'],
  ESME_RINVREPFLAG: ['PERMANENT', 'REJECTED'],
  ESME_RINVNUMMSGS: ['PERMANENT', 'REJECTED'],
  ESME_RINVSCHED: ['PERMANENT', 'REJECTED'],
  ESME_RINVEXPIRY: ['PERMANENT', 'REJECTED'],
  ESME_RINVDFTMSGID: ['PERMANENT', 'REJECTED'],
  ESME_RX_P_APPN: ['PERMANENT', 'REJECTED'],
  ESME_RX_R_APPN: ['PERMANENT', 'REJECTED'],
  ESME_RQUERYFAIL: ['PERMANENT', 'REJECTED'],
  ESME_RINVOPTPARSTREAM: ['PERMANENT', 'REJECTED'],
  ESME_ROPTPARNOTALLWD: ['PERMANENT', 'REJECTED'],
  ESME_RINVPARLEN: ['PERMANENT', 'REJECTED'],
  ESME_RMISSINGOPTPARAM: ['PERMANENT', 'REJECTED'],
  ESME_RINVOPTPARAMVAL: ['PERMANENT', 'REJECTED'],
};

const BY_STATUS: ReadonlyMap<number, Row> = new Map((Object.keys(TABLE) as Array<keyof typeof SmppStatus>).map((name) => [SmppStatus[name], TABLE[name]]));

export function statusName(status: number): string {
  return NAMES.get(status) ?? `0x${status.toString(16).padStart(8, '0')}`;
}

/** What a submit_sm_resp (or a generic_nack answering a submit) with this command_status means. */
export function submitStatusMeaning(status: number): SubmitStatusMeaning {
  const [cls, detail] = BY_STATUS.get(status) ?? (['PERMANENT', 'REJECTED'] as Row);
  return { name: statusName(status), class: cls, ...(detail !== undefined && { detail }) };
}
