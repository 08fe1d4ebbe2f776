/** One page of a list answer: every list of the API is `{items, page, pageSize}`, pages numbered from 1. */
export interface Page<T> {
  items: T[];
  page?: number;
  pageSize?: number;
}

export interface PageOptions {
  /** Items a page (the API takes 1 to 100; default 100, the fewest requests). */
  pageSize?: number;
  /** The first page to read (default 1). */
  page?: number;
}

/**
 * Every page from `page` on, read one at a time as the loop asks: a page shorter than the page size is the last.
 * Pages are by position, so what is added while iterating can shift an item onto the next page (seen twice), and what
 * is removed can shift one back (skipped); list by a fixed window (`startDate`/`endDate`) to read a stable set.
 */
export async function* pages<T>(fetchPage: (page: number, pageSize: number) => Promise<Page<T>>, options: PageOptions = {}): AsyncGenerator<Page<T>> {
  const pageSize = options.pageSize ?? 100;
  for (let page = options.page ?? 1; ; page++) {
    const answer = await fetchPage(page, pageSize);
    if (answer.items.length > 0) yield answer;
    if (answer.items.length < (answer.pageSize ?? pageSize)) return;
  }
}

/** Every item of every page, in order (see `pages`). */
export async function* items<T>(fetchPage: (page: number, pageSize: number) => Promise<Page<T>>, options: PageOptions = {}): AsyncGenerator<T> {
  for await (const page of pages(fetchPage, options)) yield* page.items;
}
