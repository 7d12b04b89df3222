#!/usr/bin/env bash
# Makes sure the services the tests talk to are up on loopback: Redis (6379), PostgreSQL (5432,
# trust auth, database "test"), MariaDB (3306, root without password, database "test"), NATS
# (4222), RabbitMQ (5672, guest/guest), and Debian's Chromium for the demo's browser test.
# Starts a stopped service; installs a missing one from Debian's packages.
set -euo pipefail

APT_UPDATED=0
apt_install() {
  if [[ $APT_UPDATED -eq 0 ]]; then
    apt-get update -qq
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for() { # name, command... (WAIT_ATTEMPTS tries, 0.5 s apart; 60 by default)
  local name=$1
  shift
  for _ in $(seq 1 "${WAIT_ATTEMPTS:-60}"); do
    if "$@" >/dev/null 2>&1; then
      echo "$name is up"
      return 0
    fi
    sleep 0.5
  done
  echo "$name did not come up" >&2
  return 1
}

ensure_redis() {
  command -v redis-server >/dev/null || apt_install redis-server redis-tools
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
  fi
  wait_for redis redis-cli -h 127.0.0.1 -p 6379 ping
}

ensure_postgres() {
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    apt_install postgresql postgresql-client
    local conf
    conf=$(ls -d /etc/postgresql/*/main)
    sed -i -E 's/^(local|host)(\s+.*\s+)(peer|scram-sha-256|md5)$/\1\2trust/' "$conf/pg_hba.conf"
  fi
  if ! pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  fi
  wait_for postgresql pg_isready -h 127.0.0.1 -p 5432
  if ! psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname='test'" | grep -q 1; then
    psql -h 127.0.0.1 -U postgres -c 'create database test' >/dev/null
  fi
}

ensure_mariadb() {
  command -v mariadbd >/dev/null || apt_install mariadb-server mariadb-client
  if ! mariadb -h 127.0.0.1 -uroot -e 'select 1' >/dev/null 2>&1; then
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  fi
  wait_for mariadb mariadb -uroot -e 'select 1'
  # A fresh Debian install lets root in over the socket only; the tests log in over TCP.
  if ! mariadb -h 127.0.0.1 -uroot -e 'select 1' >/dev/null 2>&1; then
    mariadb -uroot -e "ALTER USER root@localhost IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket"
  fi
  mariadb -h 127.0.0.1 -uroot -e 'create database if not exists test'
}

ensure_nats() {
  # The Nest package's message-handler suite talks to NATS (with JetStream) on 4222.
  command -v nats-server >/dev/null || apt_install nats-server
  if ! (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null; then
    mkdir -p /var/lib/nats-server /var/log
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
      -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  fi
  wait_for nats bash -c '(exec 3<>/dev/tcp/127.0.0.1/4222)'
}

ensure_rabbitmq() {
  # The Nest package's RabbitMQ suites (manual acknowledgement, redelivery) talk to it on 5672.
  command -v rabbitmq-server >/dev/null || apt_install rabbitmq-server
  if ! (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; then
    rabbitmq-server -detached
  fi
  # A cold Erlang node can take well over 30 s to open its AMQP listener: allow 90 s.
  WAIT_ATTEMPTS=180 wait_for rabbitmq bash -c '(exec 3<>/dev/tcp/127.0.0.1/5672)'
}

ensure_chromium() {
  # The demo's browser test drives Debian's Chromium through playwright-core.
  command -v chromium >/dev/null || apt_install chromium
}

ensure_redis
ensure_postgres
ensure_mariadb
ensure_nats
ensure_rabbitmq
ensure_chromium
