/**
 * Where the board keeps its secret. In memory by default: closing or reloading the tab signs
 * out. Only when the user ticks "Remember on this device" is it kept in this browser's
 * localStorage (for this origin), until Sign out or until the service refuses it.
 */
import type { Credentials, Mode } from './api';

const STORAGE_KEY = 'pos-board-credentials';

function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined; // storage disabled: remembering is not offered
  }
}

export function canRemember(): boolean {
  return storage() !== undefined;
}

export function remembered(): Credentials | undefined {
  try {
    const value = JSON.parse(storage()?.getItem(STORAGE_KEY) ?? 'null') as Partial<Credentials> | null;
    const modes: Mode[] = ['kitchen', 'operator'];
    if (!value || !modes.includes(value.mode as Mode) || typeof value.secret !== 'string' || value.secret === '')
      return undefined;
    if (value.mode === 'operator' && typeof value.locationId !== 'string') return undefined;
    return { mode: value.mode as Mode, secret: value.secret, locationId: value.locationId };
  } catch {
    return undefined;
  }
}

export function remember(credentials: Credentials): void {
  storage()?.setItem(STORAGE_KEY, JSON.stringify(credentials));
}

export function forget(): void {
  storage()?.removeItem(STORAGE_KEY);
}
