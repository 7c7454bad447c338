# jobwheel's admin as a container image: built with the official Rust image, run on slim Debian
# as an unprivileged user. Build: docker build -t jobwheel .
# Run:   docker run -p 8080:8080 -v jobwheel-data:/var/lib/jobwheel jobwheel
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# the same release profile `cargo build --release` uses: stripped of debug info
RUN cargo build --release --locked --bin jobwheel

FROM debian:bookworm-slim
# curl answers the HEALTHCHECK; ca-certificates lets the admin reach https executors and SMTP
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home-dir /var/lib/jobwheel --create-home --uid 10001 jobwheel
COPY --from=build /src/target/release/jobwheel /usr/local/bin/jobwheel
USER jobwheel
WORKDIR /var/lib/jobwheel
ENV JOBWHEEL_DATABASE_URL=sqlite:///var/lib/jobwheel/jobwheel.db \
    RUST_LOG=info
VOLUME ["/var/lib/jobwheel"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["jobwheel"]
CMD ["admin", "--bind", "0.0.0.0:8080"]
