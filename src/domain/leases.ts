/**
 * How long before its lease ends, by its own clock, a node stops sending what it claimed: the node that claims the
 * work next decides by its clock that the lease is over, and clocks differ a little between nodes.
 */
export function fenceMargin(leaseMs: number): number {
  return Math.min(2_000, Math.floor(leaseMs / 4));
}
