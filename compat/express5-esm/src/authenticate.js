/**
 * Stands in for real authentication (passport, a JWT check): it leaves the principal on
 * `req.user`, where oncely's `scope: 'user.tenantId'` reads it. A user may belong to no tenant
 * (a platform operator); tenant-scoped routes then answer `400 missing-key-field`.
 */
export function authenticate(req, res, next) {
  const id = req.get('x-user-id');
  if (!id) {
    res.status(401).type('application/problem+json').json({
      type: 'about:blank',
      title: 'Unauthorized',
      status: 401,
      detail: 'x-user-id missing',
    });
    return;
  }
  const tenantId = req.get('x-tenant-id');
  req.user = tenantId ? { id, tenantId } : { id };
  next();
}
