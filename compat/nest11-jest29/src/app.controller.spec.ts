import { Test, TestingModule } from '@nestjs/testing';
import { OncelyModule } from '@oncely/nestjs';
import { AppController } from './app.controller';
import { AppService } from './app.service';

describe('AppController', () => {
  let appController: AppController;

  beforeEach(async () => {
    // The starter's unit spec, once the app's modules import OncelyModule: compiling it loads
    // oncely's engine (and looks for @opentelemetry/api, which this app does not install).
    const app: TestingModule = await Test.createTestingModule({
      imports: [OncelyModule.forRoot({ namespace: 'shop', service: 'shop-api' })],
      controllers: [AppController],
      providers: [AppService],
    }).compile();

    appController = app.get<AppController>(AppController);
  });

  describe('root', () => {
    it('should return "Hello World!"', () => {
      expect(appController.getHello()).toBe('Hello World!');
    });
  });
});
