/** An SMPP session bound to this node's SMPP server. */
export interface SmppSessionView {
  credentialId: string;
  systemId: string;
  mode: 'transmitter' | 'receiver' | 'transceiver';
  remoteAddress: string;
  secure: boolean;
  boundAt: number;
}

/** The SMPP sessions bound to this node (each node serves its own; a cluster's are the sum of its nodes'). */
export interface SmppSessionDirectory {
  list(credentialIds?: readonly string[]): SmppSessionView[];
}
