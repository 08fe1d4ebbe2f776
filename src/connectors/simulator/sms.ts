/**
 * What the simulated operator does with a destination, by its last four digits:
 * 0001 → UNDELIVERED receipt; 0002 → rejected at submit (permanent); 0003 → accepted, never a receipt;
 * 0004 → one temporary submit error, then DELIVERED; anything else → DELIVERED.
 */
export type SimulatedOutcome = 'DELIVERED' | 'UNDELIVERED' | 'REJECTED' | 'NO_RECEIPT' | 'TEMPORARY_THEN_DELIVERED';

export function simulatedOutcome(recipient: string): SimulatedOutcome {
  switch (recipient.slice(-4)) {
    case '0001':
      return 'UNDELIVERED';
    case '0002':
      return 'REJECTED';
    case '0003':
      return 'NO_RECEIPT';
    case '0004':
      return 'TEMPORARY_THEN_DELIVERED';
    default:
      return 'DELIVERED';
  }
}
