/** Sign-in: a kitchen with its location's SERVICE key, or an operator with the admin token and a location. */
import { useState } from 'preact/hooks';
import { apiFor, BoardApi, Credentials, Mode } from './api';
import { canRemember } from './credentials';
import { AuthError, RequestError } from './http';

export interface SignInProps {
  /** Shown above the form: why the last board signed out. */
  notice?: string;
  onSignedIn(credentials: Credentials, api: BoardApi, title: string, remember: boolean): void;
}

export function SignIn({ notice, onSignedIn }: SignInProps) {
  const [mode, setMode] = useState<Mode>('kitchen');
  const [secret, setSecret] = useState('');
  const [locationId, setLocationId] = useState('');
  const [keep, setKeep] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [working, setWorking] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (working) return;
    const credentials: Credentials = mode === 'kitchen' ? { mode, secret: secret.trim() } : { mode, secret: secret.trim(), locationId: locationId.trim() };
    setWorking(true);
    setError(undefined);
    try {
      const api = apiFor(credentials);
      const title = await api.signIn();
      onSignedIn(credentials, api, title, keep);
    } catch (err) {
      if (err instanceof AuthError) setError(mode === 'kitchen' ? 'That key was not accepted.' : 'That admin token was not accepted.');
      else if (err instanceof RequestError && err.status === 404 && mode === 'operator') setError('No location has that id.');
      else setError((err as Error).message);
    } finally {
      setWorking(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>Location board</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {/* method="post" with no action: even a submit without the script would not put the key in a URL */}
      <form method="post" onSubmit={(event) => void submit(event)} aria-describedby="sign-in-help">
        <fieldset>
          <legend>Sign in as</legend>
          <label class="choice">
            <input type="radio" name="mode" value="kitchen" checked={mode === 'kitchen'} onChange={() => setMode('kitchen')} />
            Kitchen <span class="sub">this location's register key</span>
          </label>
          <label class="choice">
            <input type="radio" name="mode" value="operator" checked={mode === 'operator'} onChange={() => setMode('operator')} />
            Operator <span class="sub">the admin token, any location</span>
          </label>
        </fieldset>
        {mode === 'operator' && (
          <label class="field">
            Location id
            <input
              name="location"
              required
              autocomplete="off"
              spellcheck={false}
              value={locationId}
              onInput={(event) => setLocationId(event.currentTarget.value)}
            />
          </label>
        )}
        <label class="field">
          {mode === 'kitchen' ? 'Register key' : 'Admin token'}
          <input
            name="secret"
            type="password"
            required
            autocomplete="off"
            value={secret}
            onInput={(event) => setSecret(event.currentTarget.value)}
          />
        </label>
        {canRemember() && (
          <label class="choice">
            <input type="checkbox" name="remember" checked={keep} onChange={(event) => setKeep(event.currentTarget.checked)} />
            Remember on this device
          </label>
        )}
        <p id="sign-in-help" class="help">
          The key stays in this tab's memory and is gone when the tab closes, unless you tick "Remember on this device" (then it is kept in
          this browser until you sign out).
        </p>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={working}>
          {working ? 'Opening…' : 'Open board'}
        </button>
      </form>
    </main>
  );
}
