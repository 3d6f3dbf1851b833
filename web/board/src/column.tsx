import type { ComponentChildren } from 'preact';

export interface ColumnProps {
  /** Names the heading's id (`<name>-heading`), which labels the region. */
  name: string;
  title: string;
  /** Beside the heading: how many items, in the column's words. */
  count?: string;
  class?: string;
  children: ComponentChildren;
}

/** One column of the board: a region labelled by its heading. */
export function Column({ name, title, count, class: className, children }: ColumnProps) {
  const heading = `${name}-heading`;
  return (
    <section class={className} aria-labelledby={heading}>
      <div class="section-head">
        <h2 id={heading}>{title}</h2>
        {count !== undefined && <span class="count">{count}</span>}
      </div>
      {children}
    </section>
  );
}
