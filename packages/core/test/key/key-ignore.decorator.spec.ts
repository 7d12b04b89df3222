import { KeyIgnore, KeySpecError } from '@oncely/core';
import { getKeyIgnoredProperties } from '../../src/key/key-ignore.decorator.js';

describe('KeyIgnore', () => {
  class BaseDto {
    @KeyIgnore() requestedAt = '';
    amount = '';
  }
  class ChildDto extends BaseDto {
    @KeyIgnore() traceId = '';
  }
  class PlainDto {
    amount = '';
  }

  it('records ignored property names per class, inherited by subclasses', () => {
    expect([...getKeyIgnoredProperties(BaseDto)]).toEqual(['requestedAt']);
    expect([...getKeyIgnoredProperties(ChildDto)].sort()).toEqual(['requestedAt', 'traceId']);
    expect(getKeyIgnoredProperties(PlainDto).size).toBe(0);
  });

  it('does not leak a subclass’s marks into its base class', () => {
    expect(getKeyIgnoredProperties(BaseDto).has('traceId')).toBe(false);
  });

  it('keeps its registry out of the instance’s own and enumerable properties', () => {
    const dto = new ChildDto();

    expect(Object.keys(dto).sort()).toEqual(['amount', 'requestedAt', 'traceId']);
    expect(Object.getOwnPropertySymbols(dto)).toEqual([]);
  });

  it('refuses static properties', () => {
    const decorate = () => {
      class WithStatic {
        @KeyIgnore() static cache = 1;
      }
      return WithStatic;
    };

    expect(decorate).toThrow(KeySpecError);
  });

  it('refuses symbol-keyed properties', () => {
    const decorator = KeyIgnore();

    expect(() => decorator(PlainDto.prototype, Symbol('s'))).toThrow(KeySpecError);
  });
});
