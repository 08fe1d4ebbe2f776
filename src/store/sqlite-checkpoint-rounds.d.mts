export declare function checkpointRounds(
  checkpoint: () => { log: number; checkpointed: number },
  last: { seen: number; complete: boolean; maxRounds: number },
): { log: number; complete: boolean; added: number; copying: number; rounds: number };
