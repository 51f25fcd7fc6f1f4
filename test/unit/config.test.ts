import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('has defaults that start the sandbox on port 4000', () => {
    const config = loadConfig({}, []);
    expect(config.port).toBe(4000);
    expect(config.gitlabUrl).toBeNull();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('lets the old generation grow 100% past what survives by default, and 0 leaves V8 its own factor', () => {
    expect(loadConfig({}, []).heapGrowingPercent).toBe(100);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }, []).heapGrowingPercent).toBe(0);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '5000' })).toThrow(/HEAP_GROWING_PERCENT must be between 0 and 1000/);
  });

  it('reads the environment, and flags win over it', () => {
    const config = loadConfig({ PORT: '5000', GITLAB_URL: 'https://gitlab.example.com' }, ['--port', '6000']);
    expect(config.port).toBe(6000);
    expect(config.gitlabUrl?.href).toBe('https://gitlab.example.com/');
    expect(loadConfig({}, ['--port=7000']).port).toBe(7000);
  });

  it('names the variable in the error for a bad value', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(new ConfigError('PORT must be a whole number, got "abc"'));
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT must be between 0 and 65535/);
    expect(() => loadConfig({ GITLAB_URL: 'not a url' })).toThrow(/GITLAB_URL is not a URL/);
    expect(() => loadConfig({ GITLAB_URL: 'ftp://x' })).toThrow(/http or https/);
    expect(() => loadConfig({ GITLAB_URL: 'https://user:pw@x' })).toThrow(/must not hold credentials/);
    expect(() => loadConfig({}, ['--bogus', '1'])).toThrow(/unknown option "--bogus"/);
    expect(() => loadConfig({}, ['--port'])).toThrow(/--port needs a value/);
  });

  it('drops the API path from an upstream URL given with it, keeping a prefix before it', () => {
    expect(loadConfig({ GITLAB_URL: 'http://127.0.0.1:3001/api/v4' }).gitlabUrl?.href).toBe('http://127.0.0.1:3001/');
    expect(loadConfig({ GITLAB_URL: 'https://example.com/gitlab/api/v4/' }).gitlabUrl?.href).toBe('https://example.com/gitlab');
    expect(loadConfig({ GITLAB_URL: 'https://example.com/gitlab' }).gitlabUrl?.href).toBe('https://example.com/gitlab');
    expect(loadConfig({ HUBZILLA_URL: 'https://hub.example.com/api/z/1.0' }).hubzillaUrl?.href).toBe('https://hub.example.com/');
    expect(loadConfig({ HUBZILLA_URL: 'https://hub.example.com/api/z/1.0x' }).hubzillaUrl?.href).toBe('https://hub.example.com/api/z/1.0x');
  });
});

describe('the budget and webhook settings of the fleet', () => {
  it('takes a whsec_ signing token of 24 bytes or more, and refuses anything else', () => {
    const token = `whsec_${Buffer.from('a signing key of 32 bytes, or so').toString('base64')}`;
    expect(loadConfig({ GITLAB_WEBHOOK_SIGNING_TOKEN: token }, []).gitlabWebhookSigningToken).toBe(token);
    expect(() => loadConfig({ GITLAB_WEBHOOK_SIGNING_TOKEN: 'plain-secret-of-some-length' }, [])).toThrow(/GITLAB_WEBHOOK_SIGNING_TOKEN must be "whsec_"/);
    expect(() => loadConfig({ GITLAB_WEBHOOK_SIGNING_TOKEN: `whsec_${Buffer.from('short').toString('base64')}` }, [])).toThrow(/at least 24 bytes/);
  });

  it('takes an anonymous share per address from 0.01 to 1', () => {
    expect(loadConfig({}, []).anonymousSharePerAddress).toBe(0.25);
    expect(loadConfig({ ANONYMOUS_SHARE_PER_ADDRESS: '0.1' }, []).anonymousSharePerAddress).toBe(0.1);
    expect(() => loadConfig({ ANONYMOUS_SHARE_PER_ADDRESS: '0' }, [])).toThrow(/ANONYMOUS_SHARE_PER_ADDRESS must be a number from 0.01 to 1/);
  });
});
