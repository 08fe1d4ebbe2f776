import type { Store } from '../../store/db.ts';
import { claimSmppBind, forgetSmppBinds, releaseSmppBind } from '../../store/smpp-binds.ts';
import { NODE_GONE_AFTER_MS } from '../cluster.ts';

/**
 * Customers' SMPP binds counted for the whole cluster: a credential allowed 2 binds gets 2 in all, whichever nodes
 * its sessions reach. A bind is held by its node while the node is alive (its heartbeat); a node that dies gives its
 * binds up when it is taken for gone.
 */
export class SmppBinds {
  constructor(
    private readonly store: Store,
    private readonly nodeId: string,
  ) {}

  /** Whether the session may hold one more bind of the credential (it then holds it until released). */
  claim(credentialId: string, session: string, max: number, now = Date.now()): Promise<boolean> {
    return claimSmppBind(this.store, { credentialId, session, node: this.nodeId }, max, now - NODE_GONE_AFTER_MS, now);
  }

  release(credentialId: string, session: string): Promise<void> {
    return releaseSmppBind(this.store, credentialId, session);
  }

  /** Binds this node held before (it restarted under the same id, or is stopping): none of its sessions is left. */
  forget(): Promise<void> {
    return forgetSmppBinds(this.store, this.nodeId);
  }
}
