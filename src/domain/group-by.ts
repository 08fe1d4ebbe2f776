/**
 * `items` in groups by `keyOf`, each group in the items' order, the groups in the order their keys first came (a
 * `Map`). One pass: adding each item to a copy of its group instead made a batch of n items cost n² / 2 copies.
 */
export function groupBy<T, K, V = T>(items: Iterable<T>, keyOf: (item: T) => K, valueOf?: (item: T) => V): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const item of items) {
    const key = keyOf(item);
    const value = valueOf ? valueOf(item) : (item as unknown as V);
    const group = groups.get(key);
    if (group) group.push(value);
    else groups.set(key, [value]);
  }
  return groups;
}
