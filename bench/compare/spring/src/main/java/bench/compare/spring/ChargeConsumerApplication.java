package bench.compare.spring;

import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.core5.util.Timeout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.HttpComponentsClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/**
 * The ChargeDueEvent consumer as a Spring Boot 3.5 + Spring Cloud AWS 3.4 application: the
 * reference design that bench/compare/run.py measures beside ours (docs/performance.md, "Side by
 * side with the Powertools and Spring designs"). {@link ChargeListener} has the design.
 */
@SpringBootApplication
public class ChargeConsumerApplication {

  public static void main(String[] args) {
    SpringApplication.run(ChargeConsumerApplication.class, args);
  }

  /**
   * The bank's client: RestClient over Apache HttpClient 5 with a pool as large as the listener's
   * concurrency (kept-alive connections, one route), and timeouts well inside the lease. With an
   * SSL bundle named {@code bank} (spring.ssl.bundle.pem.bank.*: the bank's CA and our client
   * certificate), its TLS uses that bundle: HTTPS with mutual TLS. Connection state is off:
   * HttpClient otherwise ties a connection that presented a client certificate to the request
   * context that opened it, and RestClient gives every request a new one, so no such connection
   * would ever be reused (a TCP connect and a TLS handshake per bank call). This process has one
   * client certificate for all its requests, the case HttpClient's documentation names for
   * disabling it.
   */
  @Bean(destroyMethod = "close")
  CloseableHttpClient bankHttpClient(@Value("${WORKERS:32}") int workers, SslBundles sslBundles) {
    var connections = PoolingHttpClientConnectionManagerBuilder.create();
    if (sslBundles.getBundleNames().contains("bank")) {
      connections.setTlsSocketStrategy(ClientTlsStrategyBuilder.create()
          .setSslContext(sslBundles.getBundle("bank").createSslContext())
          .buildClassic());
    }
    connections
        .setMaxConnTotal(2 * workers)
        .setMaxConnPerRoute(2 * workers)
        .setDefaultConnectionConfig(ConnectionConfig.custom()
            .setConnectTimeout(Timeout.ofSeconds(2))
            .setSocketTimeout(Timeout.ofSeconds(10))
            .setTimeToLive(5, TimeUnit.MINUTES)
            .build());
    return HttpClients.custom()
        .setConnectionManager(connections.build())
        .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(10)).build())
        .disableAutomaticRetries() // a failed call is transient: the claim is released, SQS redelivers
        .disableConnectionState()
        .build();
  }

  @Bean
  RestClient bankClient(RestClient.Builder builder, CloseableHttpClient bankHttpClient,
      @Value("${CORE_BANKING_URL}") String url) {
    return builder.baseUrl(url).requestFactory(new HttpComponentsClientHttpRequestFactory(bankHttpClient)).build();
  }

  @Bean
  RestClient notificationClient(RestClient.Builder builder, CloseableHttpClient bankHttpClient,
      @Value("${NOTIFICATION_URL:${CORE_BANKING_URL}}") String url) {
    return builder.baseUrl(url).requestFactory(new HttpComponentsClientHttpRequestFactory(bankHttpClient)).build();
  }
}
