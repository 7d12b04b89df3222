/** `OrdersController.create`: how messages name a decorated method. */
export function routeName(target: object, propertyKey: string | symbol): string {
  const owner = typeof target === 'function' ? target : target.constructor;
  return `${owner.name}.${String(propertyKey)}`;
}
