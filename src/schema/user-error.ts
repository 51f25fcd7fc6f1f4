/**
 * UserError, the errors-as-data of mutation payloads, and the helper that
 * runs a mutation and turns user-caused upstream failures into them.
 * System failures (401, 404, 5xx, timeouts) stay top-level errors.
 */
import { userErrorsOf, type UserErrorRecord } from '../upstreams/gitlab/user-errors.js';
import { builder } from './builder.js';

export interface UserErrorShape {
  message: string;
  field: string[];
  code: UserErrorRecord['code'];
}

export const UserErrorCode = builder.enumType('UserErrorCode', {
  description: 'Why a mutation refused its input.',
  values: {
    INVALID: { value: 'INVALID', description: 'A value failed validation.' },
    MISSING: { value: 'MISSING', description: 'A required value is missing.' },
    TAKEN: { value: 'TAKEN', description: 'A value that must be unique is already taken.' },
    CONFLICT: { value: 'CONFLICT', description: 'The resource already exists or is in a conflicting state.' },
    FORBIDDEN: { value: 'FORBIDDEN', description: "The caller's role does not allow this action." },
    NOT_ALLOWED: { value: 'NOT_ALLOWED', description: 'The upstream does not support this action here.' },
    PRECONDITION_FAILED: { value: 'PRECONDITION_FAILED', description: 'The resource changed since the caller read it.' },
  } as const,
});

export const UserError = builder.objectRef<UserErrorShape>('UserError').implement({
  description: 'An error the caller can fix by changing the input.',
  fields: (t) => ({
    message: t.exposeString('message', { description: 'What is wrong, for humans.' }),
    field: t.exposeStringList('field', { description: 'Path of the input field at fault, e.g. ["input", "name"]; empty when the whole input is at fault.' }),
    code: t.field({ type: UserErrorCode, description: 'Machine-readable reason.', resolve: (e) => e.code }),
  }),
});

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** A user error about one input field (checked before calling the upstream). */
export function inputError(field: string, message: string, code: UserErrorShape['code'] = 'INVALID'): UserErrorShape {
  return { message, field: ['input', field], code };
}

/**
 * Runs a mutation; on a user-caused upstream failure returns its errors
 * instead of throwing. `renames` maps upstream parameter names to input
 * field names where they differ.
 */
export async function runMutation<T>(
  run: () => Promise<T>,
  renames: Readonly<Record<string, string>> = {},
): Promise<{ result: T | null; errors: UserErrorShape[] }> {
  try {
    return { result: await run(), errors: [] };
  } catch (error) {
    const errors = userErrorsOf(error);
    if (!errors) throw error;
    return {
      result: null,
      errors: errors.map((e) => ({
        message: e.message,
        code: e.code,
        field: e.field.length ? ['input', ...e.field.map((f, i) => (i === 0 ? (renames[f] ?? camel(f)) : camel(f)))] : [],
      })),
    };
  }
}
