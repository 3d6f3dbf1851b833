import { useState } from 'preact/hooks';
import type { AvailabilityInput } from '@pos/shared/domain/records';
import { Column } from './column';
import { clock } from './format';
import type { MenuProduct } from './use-menu';

/** How long a snooze made here lasts: until lifted, or for a while. */
const SNOOZE_FOR = [
  { label: 'until lifted', minutes: 0 },
  { label: 'for 30 min', minutes: 30 },
  { label: 'for 1 h', minutes: 60 },
  { label: 'for 4 h', minutes: 240 },
] as const;

export interface MenuColumnProps {
  /** Every product of the menu with its availability; null: the location has no menu. */
  products: MenuProduct[] | null;
  canAct: boolean;
  busy: boolean;
  onSet(productId: string, availability: AvailabilityInput): void;
}

/** The menu's snoozed ("86ed") products, each with Lift, and a snooze of another (docs/menu.md). */
export function MenuColumn({ products, canAct, busy, onSet }: MenuColumnProps) {
  const [chosen, setChosen] = useState('');
  const [minutes, setMinutes] = useState(0);
  if (products === null) {
    return (
      <Column name="menu" title="Snoozed">
        <p class="empty">The location has no menu.</p>
      </Column>
    );
  }
  const snoozed = products.filter((product) => !product.available);
  const available = products.filter((product) => product.available);
  const snooze = () => {
    if (!chosen) return;
    onSet(chosen, {
      available: false,
      ...(minutes > 0 && { until: new Date(Date.now() + minutes * 60_000).toISOString() }),
    });
    setChosen('');
  };
  return (
    <Column name="menu" title="Snoozed" count={`${snoozed.length} of ${products.length}`}>
      {snoozed.length === 0 ? (
        <p class="empty">Everything is available.</p>
      ) : (
        <ul class="list" role="list">
          {snoozed.map((product) => (
            <li key={product.productId}>
              <article class="card snoozed" aria-label={`${product.name} snoozed`}>
                <h3>{product.name}</h3>
                <span class="sub">
                  {product.unavailableUntil ? `until ${clock(product.unavailableUntil)}` : 'until lifted'}
                  {product.unavailableReason ? ` (${product.unavailableReason})` : ''}
                </span>
                {canAct && (
                  <button
                    type="button"
                    class="quiet"
                    aria-label={`Lift the snooze of ${product.name}`}
                    disabled={busy}
                    onClick={() => onSet(product.productId, { available: true })}
                  >
                    Lift
                  </button>
                )}
              </article>
            </li>
          ))}
        </ul>
      )}
      {canAct && available.length > 0 && (
        <form
          class="snooze"
          onSubmit={(event) => {
            event.preventDefault();
            snooze();
          }}
        >
          <label>
            Snooze{' '}
            <select value={chosen} onChange={(event) => setChosen(event.currentTarget.value)}>
              <option value="">a product…</option>
              {available.map((product) => (
                <option key={product.productId} value={product.productId}>
                  {product.name}
                </option>
              ))}
            </select>
          </label>{' '}
          <select
            aria-label="For how long"
            value={minutes}
            onChange={(event) => setMinutes(Number(event.currentTarget.value))}
          >
            {SNOOZE_FOR.map((option) => (
              <option key={option.minutes} value={option.minutes}>
                {option.label}
              </option>
            ))}
          </select>{' '}
          <button type="submit" class="primary" disabled={busy || !chosen}>
            Snooze
          </button>
        </form>
      )}
    </Column>
  );
}
