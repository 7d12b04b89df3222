import {
  answersPing,
  redisCli,
  startRedisCluster,
  startRedisServer,
  stopAllRedisServers,
} from '@oncely/testing-kit';

describe('throwaway Redis servers', () => {
  afterAll(stopAllRedisServers);

  it('starts a server on a spare port, stops it and starts it again on the same port', async () => {
    const server = await startRedisServer();
    expect(server.port).not.toBe(6379);
    await expect(answersPing(server.port)).resolves.toBe(true);

    await server.stop();
    expect(server.running).toBe(false);
    await expect(answersPing(server.port)).resolves.toBe(false);

    await server.start();
    await expect(answersPing(server.port)).resolves.toBe(true);
  });

  it('forms a 3-master cluster covering every slot', async () => {
    const cluster = await startRedisCluster(3);
    const info = await redisCli(cluster.nodes[0]!.port, 'CLUSTER', 'INFO');

    expect(cluster.nodes).toHaveLength(3);
    expect(info).toContain('cluster_state:ok');
    expect(info).toContain('cluster_slots_assigned:16384');
    expect(info).toContain('cluster_known_nodes:3');
    expect(info).toContain('cluster_size:3');

    await cluster.stop();
    await expect(answersPing(cluster.nodes[0]!.port)).resolves.toBe(false);
  });
});
