/**
 * Sign-in: a kitchen with its location's SERVICE key, or an operator with its token and a location;
 * once the token is entered, the locations it may open are offered.
 */
import { useState } from 'preact/hooks';
import { apiFor, BoardApi, Credentials, Mode, operatorLocations } from './api';
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
  const [choices, setChoices] = useState<{ id: string; name: string }[]>([]);

  /** The locations the entered token may open; none when it is refused (the submit says why). */
  const offerLocations = (token: string) => {
    if (mode !== 'operator' || token.trim() === '') return;
    operatorLocations(token.trim()).then(setChoices, () => setChoices([]));
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (working) return;
    const credentials: Credentials =
      mode === 'kitchen'
        ? { mode, secret: secret.trim() }
        : { mode, secret: secret.trim(), locationId: locationId.trim() };
    setWorking(true);
    setError(undefined);
    try {
      const api = apiFor(credentials);
      const title = await api.signIn();
      onSignedIn(credentials, api, title, keep);
    } catch (err) {
      if (err instanceof AuthError)
        setError(mode === 'kitchen' ? 'That key was not accepted.' : 'That token was not accepted.');
      // a route this listener does not have: the operator API lives on the other port (ADMIN_PORT)
      else if (
        err instanceof RequestError &&
        err.status === 404 &&
        mode === 'operator' &&
        err.message.startsWith('No route for')
      )
        setError('This port does not serve the operator API: open the board on the operator port (ADMIN_PORT).');
      else if (err instanceof RequestError && err.status === 404 && mode === 'operator')
        setError('No location with that id is open to this token.');
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
            <input
              type="radio"
              name="mode"
              value="kitchen"
              checked={mode === 'kitchen'}
              onChange={() => setMode('kitchen')}
            />
            Kitchen <span class="sub">this location's register key</span>
          </label>
          <label class="choice">
            <input
              type="radio"
              name="mode"
              value="operator"
              checked={mode === 'operator'}
              onChange={() => setMode('operator')}
            />
            Operator <span class="sub">an operator's token, a location it covers</span>
          </label>
        </fieldset>
        {/* the token first: the locations it covers are offered once it is typed */}
        <label class="field">
          {mode === 'kitchen' ? 'Register key' : 'Operator token'}
          <input
            name="secret"
            type="password"
            required
            autocomplete="off"
            value={secret}
            onInput={(event) => setSecret(event.currentTarget.value)}
            onChange={(event) => offerLocations(event.currentTarget.value)}
          />
        </label>
        {mode === 'operator' && (
          <label class="field">
            Location id
            <input
              name="location"
              required
              autocomplete="off"
              spellcheck={false}
              list="operator-locations"
              value={locationId}
              onInput={(event) => setLocationId(event.currentTarget.value)}
            />
            <datalist id="operator-locations">
              {choices.map((choice) => (
                <option key={choice.id} value={choice.id} label={choice.name} />
              ))}
            </datalist>
          </label>
        )}
        {canRemember() && (
          <label class="choice">
            <input
              type="checkbox"
              name="remember"
              checked={keep}
              onChange={(event) => setKeep(event.currentTarget.checked)}
            />
            Remember on this device
          </label>
        )}
        <p id="sign-in-help" class="help">
          The key stays in this tab's memory and is gone when the tab closes, unless you tick "Remember on this device"
          (then it is kept in this browser until you sign out).
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
