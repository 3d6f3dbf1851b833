/**
 * The menu's stored facts (store/documents.ts), apart from its rules
 * (menu.ts), which need node:crypto that the board has not.
 */

/** What a menu holds: its items, groups and options (counted as the events and the audit say). */
export interface MenuCounts {
  items: number;
  modifierGroups: number;
  options: number;
}

/** A product snoozed (86ed): until when (absent: until lifted) and why. */
export interface Snooze {
  productId: string;
  until?: Date;
  reason?: string;
}

/** What the answered menu says of its version: the location's pointer to it. */
export interface Published {
  version: number;
  source: 'register' | 'operator';
  publishedAt: Date;
}
